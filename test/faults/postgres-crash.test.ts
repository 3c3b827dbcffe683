// PostgreSQL crashes (SIGKILL: no goodbye to its clients) under a running hub process, and comes
// back on the same data directory and port. The hub must stay up, say "retry later" to every
// export meanwhile, reconnect by itself, and end up with every report stored exactly once.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { holdWrites, hubSessionsWaitingOnLocks, lockingSession } from '../support/held-writes.ts';
import { freeHubPorts, type HubProcess, killHub, readyzStatus, spawnHub, waitHubReady } from '../support/hub-process.ts';
import { type OwnPostgres, startOwnPostgres } from '../support/own-postgres.ts';
import { chunks, expectedCurrent, expectedHistory, protobufBatch, reportSet, seededRandom, shuffled } from '../support/report-stream.ts';
import { AnswerLog, grpcRetryingExporter, httpRetryingExporter, type RetryingExporter } from '../support/retrying-exporter.ts';
import { asReports, queryAt, storedCurrent, storedHistory } from '../support/stored-reports.ts';
import { waitFor } from '../support/wait-for.ts';

const SOAK = process.env.KALYPSO_SOAK === '1';
/** Kysely's migration lock (an advisory lock id fixed in its Postgres adapter). */
const KYSELY_MIGRATION_LOCK = '3853314791062309107';
const RETRY_ANSWERS = ['ok', 'unavailable+retry-info', '503+retry-after'] as const;

let postgres: OwnPostgres;
let hub: HubProcess | undefined;

beforeAll(async () => {
  postgres = await startOwnPostgres();
});

afterEach(async () => {
  // Restart Postgres if a failed test left it down, so the next test starts from a live server.
  if (postgres.server.pid === undefined) await postgres.server.start();
});

afterAll(async () => {
  await killHub(hub);
  await postgres?.remove();
});

const query = (): ReturnType<typeof queryAt> => queryAt(postgres.server.url);

const alive = (process: HubProcess): boolean => process.process.exitCode === null && process.process.signalCode === null;

/** The hub the earlier tests left running, or a fresh one when an earlier test failed. */
async function runningHub(): Promise<HubProcess> {
  if (hub === undefined || !alive(hub)) hub = spawnHub(postgres.server.url, await freeHubPorts());
  await waitHubReady(hub, 60_000);
  return hub;
}

describe('PostgreSQL killed under a running hub', () => {
  it('keeps the hub alive when Postgres dies during start-up migrations, and migrates once it is back', async () => {
    // Hold Kysely's migration lock so that the hub's migration is parked on a checked-out
    // connection at the moment Postgres dies: the case that crashed the hub with an unhandled
    // 'error' event from a pg Client.
    const locker = lockingSession(postgres.server.url);
    await locker.connect();
    await locker.query(`SELECT pg_advisory_lock(${KYSELY_MIGRATION_LOCK})`);
    hub = spawnHub(postgres.server.url, await freeHubPorts());
    const running = hub;
    await waitFor(async () => (await hubSessionsWaitingOnLocks(postgres.server.url)) > 0, 'the hub migrating, waiting for the lock', 20_000);
    expect(await readyzStatus(running.ports.http)).toBe(503);

    await postgres.server.kill();
    await waitFor(
      () => running.output().includes('will retry migrations') || !alive(running),
      'the hub to notice the outage (or die)',
    );
    expect(alive(running), running.output()).toBe(true);
    expect((await fetch(`http://127.0.0.1:${running.ports.http}/healthz`)).status).toBe(200);
    expect(await readyzStatus(running.ports.http)).toBe(503);

    await postgres.server.start();
    await waitHubReady(running, 60_000);
    expect((await query()<{ n: number }>('SELECT count(*)::int AS n FROM kysely_migration'))[0]!.n).toBeGreaterThan(0);
  });

  it('keeps the hub alive when Postgres dies under a write, answers "retry later", and stores the retry once', async () => {
    const running = await runningHub();
    const reports = reportSet('checked-out', 2, 2);
    const [grpcBatch, httpBatch] = await Promise.all(chunks(reports, 2).map((batch) => protobufBatch(batch)));
    const answers = new AnswerLog();
    const grpcExporter = grpcRetryingExporter(running.ports.otlpGrpc, answers);
    const httpExporter = httpRetryingExporter(running.ports.otlpHttp, answers);

    // Both writes wait on this lock, each holding a pooled connection, when Postgres dies.
    await holdWrites(postgres.server.url);
    const sent = [grpcExporter.send(grpcBatch!), httpExporter.send(httpBatch!)];
    await waitFor(async () => (await hubSessionsWaitingOnLocks(postgres.server.url)) >= 2, 'both writes waiting on the lock');

    await postgres.server.kill();
    await waitFor(() => answers.attempts.length >= 2 || !alive(running), 'answers to the interrupted writes (or the hub dying)');
    expect(alive(running), running.output()).toBe(true);
    expect(answers.outside(RETRY_ANSWERS)).toEqual([]);
    expect(await readyzStatus(running.ports.http)).toBe(503);

    await postgres.server.start();
    await Promise.all(sent);
    grpcExporter.close();
    expect(answers.counts()).toMatchObject({ ok: 2 });
    expect(await storedHistory(query(), 'checked-out')).toEqual(expectedHistory(reports));
    expect(asReports(await storedCurrent(query(), 'checked-out'))).toEqual(expectedCurrent(reports));
  });

  it('survives a crash mid-ingest: every answer is a retryable one, and every report is stored exactly once', async () => {
    await crashMidIngest(await runningHub(), 'crash');
  });

  it('survives a crash mid-ingest with --append-first, the projector included', async () => {
    await killHub(hub);
    hub = spawnHub(postgres.server.url, await freeHubPorts(), ['--append-first']);
    await waitHubReady(hub, 60_000);
    await crashMidIngest(hub, 'afcrash');
  });
});

/** Ingest from several clients, PostgreSQL SIGKILLed a quarter of the way and started again. */
async function crashMidIngest(running: HubProcess, prefix: string): Promise<void> {
  const pid = running.process.pid;
  const clients = SOAK ? 8 : 4;
  const reports = shuffled(reportSet(prefix, SOAK ? 400 : 40, SOAK ? 25 : 10), seededRandom(2));
  const batches = await Promise.all(chunks(reports, SOAK ? 50 : 10).map((batch) => protobufBatch(batch)));
  const answers = new AnswerLog();
  let acknowledged = 0;
  // Half the clients speak gRPC, half HTTP; each sends its share of batches one after another.
  const exporters: RetryingExporter[] = Array.from({ length: clients }, (_, i) =>
    i % 2 === 0 ? grpcRetryingExporter(running.ports.otlpGrpc, answers) : httpRetryingExporter(running.ports.otlpHttp, answers),
  );
  const streams = exporters.map(async (exporter, i) => {
    for (let b = i; b < batches.length; b += clients) {
      await exporter.send(batches[b]!);
      acknowledged += 1;
    }
  });
  const done = Promise.all(streams);
  done.catch(() => undefined);

  await waitFor(() => acknowledged >= batches.length / 4, 'a quarter of the batches stored before the crash', 30_000);
  await postgres.server.kill();
  const refusedBefore = answers.attempts.filter((attempt) => attempt.kind !== 'ok').length;
  // Down long enough that every client hits the outage, retries, and is refused again.
  await waitFor(
    () => answers.attempts.filter((attempt) => attempt.kind !== 'ok').length >= refusedBefore + clients * 2,
    'every client refused during the outage',
  );
  expect(alive(running), running.output()).toBe(true);
  expect(await readyzStatus(running.ports.http)).toBe(503);

  await postgres.server.start();
  await done;
  for (const exporter of exporters) exporter.close();

  // No permanent-error status was ever given; the outage was actually felt.
  expect(answers.outside(RETRY_ANSWERS)).toEqual([]);
  expect(answers.attempts.some((attempt) => attempt.kind === 'unavailable+retry-info')).toBe(true);
  expect(answers.attempts.some((attempt) => attempt.kind === '503+retry-after')).toBe(true);
  // The same hub process, reconnected by itself.
  expect(running.process.pid).toBe(pid);
  expect(alive(running)).toBe(true);
  expect(await readyzStatus(running.ports.http)).toBe(200);
  // --append-first: what was acknowledged is folded in by the projector, which waited out the outage.
  await waitFor(async () => (await query()<{ n: number }>('SELECT count(*)::int AS n FROM pending_report'))[0]!.n === 0, 'every report projected');
  expect(await storedHistory(query(), prefix)).toEqual(expectedHistory(reports));
  expect(asReports(await storedCurrent(query(), prefix))).toEqual(expectedCurrent(reports));
}
