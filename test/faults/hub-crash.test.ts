// The hub process is killed (SIGKILL: no graceful shutdown) while batches are in flight, and a new
// one starts on the same ports, as a Deployment's restart would. Clients retry as a collector does
// (a connection refused or cut is retried). Nothing may be lost and nothing stored twice: a batch
// whose write was cut off never committed, and one that committed before its answer was lost is
// recognised when it comes again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdWrites, hubSessionsWaitingOnLocks } from '../support/held-writes.ts';
import { freeHubPorts, type HubPorts, type HubProcess, killHub, spawnHub, waitHubReady } from '../support/hub-process.ts';
import { chunks, expectedCurrent, expectedHistory, protobufBatch, reportSet, seededRandom, shuffled } from '../support/report-stream.ts';
import { AnswerLog, grpcRetryingExporter, httpRetryingExporter, type RetryingExporter } from '../support/retrying-exporter.ts';
import { asReports, queryAt, storedCurrent, storedHistory } from '../support/stored-reports.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

const SOAK = process.env.KALYPSO_SOAK === '1';
const ACCEPTABLE = ['ok', 'connection-failed', 'unavailable+retry-info', '503+retry-after'] as const;

let database: TestDatabase;
let ports: HubPorts;
let hub: HubProcess | undefined;
/** The flags the hub (and every restart of it) runs with. */
let hubFlags: readonly string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  ports = await freeHubPorts();
});

afterAll(async () => {
  await killHub(hub);
  await database?.drop();
});

/** SIGKILLs the running hub and starts a new one on the same ports. */
async function crashAndRestart(): Promise<HubProcess> {
  const crashed = hub!;
  crashed.process.kill('SIGKILL');
  expect(await crashed.exited).toBe('SIGKILL');
  hub = spawnHub(database.url, ports, hubFlags);
  await waitHubReady(hub);
  return hub;
}

describe('hub killed mid-batch and restarted', () => {
  it('loses nothing of the batches its writes were cut off in', async () => {
    hub = spawnHub(database.url, ports);
    await waitHubReady(hub);
    const reports = reportSet('inflight', 4, 3);
    const [grpcBatch, httpBatch] = await Promise.all(chunks(reports, 6).map((batch) => protobufBatch(batch)));
    const answers = new AnswerLog();
    const grpcExporter = grpcRetryingExporter(ports.otlpGrpc, answers);
    const httpExporter = httpRetryingExporter(ports.otlpHttp, answers);

    // Both writes are inside their transactions, waiting on this lock, when the hub dies.
    const locker = await holdWrites(database.url);
    const sent = Promise.all([grpcExporter.send(grpcBatch!), httpExporter.send(httpBatch!)]);
    await waitFor(async () => (await hubSessionsWaitingOnLocks(database.url)) >= 2, 'both writes waiting on the lock');

    await crashAndRestart();
    // The killed hub's sessions finish their statement once the lock goes, find their client
    // gone, and roll back; the new hub's writes of the retried batches then go through.
    await locker.query('COMMIT');
    await locker.end();
    await sent;
    grpcExporter.close();

    expect(answers.outside(ACCEPTABLE)).toEqual([]);
    expect(answers.attempts.filter((attempt) => attempt.kind === 'connection-failed').length).toBeGreaterThanOrEqual(2);
    expect(await storedHistory(queryAt(database.url), 'inflight')).toEqual(expectedHistory(reports));
    expect(asReports(await storedCurrent(queryAt(database.url), 'inflight'))).toEqual(expectedCurrent(reports));
  });

  // With --append-first an acknowledged report may still be pending when the hub dies: the next
  // hub's projector folds it, from the first report the killed one had not committed.
  it.each([
    { mode: 'every report folded in before it is acknowledged', flags: [], prefix: 'stream' },
    { mode: '--append-first', flags: ['--append-first'], prefix: 'afstream' },
  ])('keeps a stream of batches gapless and duplicate-free across repeated crashes ($mode)', async ({ flags, prefix }) => {
    const running = hub !== undefined && hub.process.exitCode === null && hub.process.signalCode === null;
    if (running && hubFlags.join() !== flags.join()) await killHub(hub);
    if (!running || hubFlags.join() !== flags.join()) {
      hubFlags = flags;
      hub = spawnHub(database.url, ports, hubFlags);
    }
    await waitHubReady(hub!);
    const crashes = SOAK ? 8 : 2;
    const reports = shuffled(reportSet(prefix, SOAK ? 300 : 30, SOAK ? 20 : 8), seededRandom(4));
    const batches = await Promise.all(chunks(reports, SOAK ? 40 : 8).map((batch) => protobufBatch(batch)));
    const answers = new AnswerLog();
    const exporters: RetryingExporter[] = [
      grpcRetryingExporter(ports.otlpGrpc, answers),
      httpRetryingExporter(ports.otlpHttp, answers),
      grpcRetryingExporter(ports.otlpGrpc, answers),
      httpRetryingExporter(ports.otlpHttp, answers),
    ];
    let acknowledged = 0;
    const done = Promise.all(
      exporters.map(async (exporter, i) => {
        for (let b = i; b < batches.length; b += exporters.length) {
          await exporter.send(batches[b]!);
          acknowledged += 1;
        }
      }),
    );
    done.catch(() => undefined);

    for (let crash = 1; crash <= crashes; crash += 1) {
      await waitFor(
        () => acknowledged >= (batches.length * crash) / (crashes + 1),
        `${crash}/${crashes + 1} of the batches stored`,
        30_000,
      );
      await crashAndRestart();
    }
    await done;
    for (const exporter of exporters) exporter.close();

    expect(answers.outside(ACCEPTABLE)).toEqual([]);
    expect(answers.attempts.some((attempt) => attempt.kind === 'connection-failed')).toBe(true);
    await waitFor(async () => (await queryAt(database.url)<{ n: number }>('SELECT count(*)::int AS n FROM pending_report'))[0]!.n === 0, 'every report projected');
    expect(await storedHistory(queryAt(database.url), prefix)).toEqual(expectedHistory(reports));
    expect(asReports(await storedCurrent(queryAt(database.url), prefix))).toEqual(expectedCurrent(reports));
  }, SOAK ? 600_000 : 60_000);
});
