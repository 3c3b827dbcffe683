// Graceful shutdown of a hub process (SIGTERM, as Kubernetes sends), beyond what
// test/cli/serve-command.test.ts proves (one HTTP export finishing on SIGINT): both transports
// at once, how new exports are turned away meanwhile, and the --shutdown-timeout deadline
// holding even when a write cannot finish — without losing that write.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdWrites, hubSessionsWaitingOnLocks } from '../support/held-writes.ts';
import { freeHubPorts, type HubPorts, type HubProcess, killHub, spawnHub, waitHubReady } from '../support/hub-process.ts';
import { grpcExport, httpExport } from '../support/raw-otlp.ts';
import { chunks, expectedCurrent, expectedHistory, protobufBatch, reportSet } from '../support/report-stream.ts';
import { AnswerLog, grpcRetryingExporter, httpRetryingExporter } from '../support/retrying-exporter.ts';
import { asReports, queryAt, storedCurrent, storedHistory } from '../support/stored-reports.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

let database: TestDatabase;
let ports: HubPorts;
const hubs: HubProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  ports = await freeHubPorts();
});

afterAll(async () => {
  for (const hub of hubs) await killHub(hub);
  await database?.drop();
});

async function startHub(shutdownTimeout: string): Promise<HubProcess> {
  const hub = spawnHub(database.url, ports, ['--shutdown-timeout', shutdownTimeout]);
  hubs.push(hub);
  await waitHubReady(hub);
  return hub;
}

/** A gRPC and an HTTP export of two reports each, both writing and held there by a lock. */
async function exportsWaitingOnALock(prefix: string) {
  const reports = reportSet(prefix, 2, 2);
  const [grpcBatch, httpBatch] = await Promise.all(chunks(reports, 2).map((batch) => protobufBatch(batch)));
  const answers = new AnswerLog();
  const grpcExporter = grpcRetryingExporter(ports.otlpGrpc, answers);
  const httpExporter = httpRetryingExporter(ports.otlpHttp, answers);
  const locker = await holdWrites(database.url);
  const sent = Promise.all([grpcExporter.send(grpcBatch!), httpExporter.send(httpBatch!)]);
  await waitFor(async () => (await hubSessionsWaitingOnLocks(database.url)) >= 2, 'both exports writing');
  return { reports, answers, grpcExporter, locker, sent };
}

describe('hub stopped with SIGTERM', () => {
  it('finishes and acknowledges in-flight exports on both transports, turns new ones away, and exits 0 in time', async () => {
    const hub = await startHub('10s');
    const { reports, answers, grpcExporter, locker, sent } = await exportsWaitingOnALock('sigterm');
    const late = await protobufBatch(reportSet('sigterm-late', 1, 1));

    const signalled = Date.now();
    hub.process.kill('SIGTERM');
    await waitFor(() => hub.output().includes('shutting down'), 'the hub to start shutting down');
    // New exports meet closed listeners: the connection is refused. That is what a collector
    // (or the Service in front of several replicas) retries elsewhere at once; accepting them
    // and answering UNAVAILABLE would keep the hub busy with work it is about to abandon.
    await waitFor(async () => (await grpcExport(ports.otlpGrpc, late)).error?.details.includes('No connection established'), 'gRPC refused');
    await expect(httpExport(ports.otlpHttp, late)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
    expect(hub.process.exitCode).toBeNull();

    await locker.query('COMMIT');
    await locker.end();
    await sent;
    grpcExporter.close();
    // Acknowledged on the first attempt: the in-flight exports were finished, not cut off.
    expect(answers.counts()).toEqual({ ok: 2 });
    expect(await hub.exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(10_000);
    expect(await storedHistory(queryAt(database.url), 'sigterm')).toEqual(expectedHistory(reports));
    expect(await storedHistory(queryAt(database.url), 'sigterm-late')).toEqual([]);
  });

  it('exits by the shutdown deadline even when a write cannot finish, and the cut-off export is stored once on retry', async () => {
    const hub = await startHub('2s');
    const { reports, answers, grpcExporter, locker, sent } = await exportsWaitingOnALock('deadline');

    const signalled = Date.now();
    hub.process.kill('SIGTERM');
    // The lock is still held: the writes cannot finish, the hub must go anyway.
    const exitCode = await Promise.race([hub.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 8_000))]);
    const tookMs = Date.now() - signalled;
    expect(exitCode, hub.output()).toBe(0);
    expect(tookMs).toBeLessThan(2_000 + 2_000);
    // Both calls are cut off at the deadline: the connection is closed, or (gRPC, when grpc-js's
    // forced shutdown gets its frame out before the process ends) the call is CANCELLED.
    // Collectors and the OpenTelemetry SDK retry both; neither is an answer a client would drop.
    await waitFor(() => answers.attempts.length >= 2, 'both clients to see the hub go');
    expect(answers.outside(['cancelled', 'connection-failed'])).toEqual([]);

    // The replacement takes over; the abandoned writes never committed, the retries store them.
    await startHub('2s');
    await locker.query('COMMIT');
    await locker.end();
    await sent;
    grpcExporter.close();
    // A retry may reach the replacement while it still migrates: it listens at once and answers
    // "retry later" (503 + Retry-After / UNAVAILABLE) until ready — retried too, never dropped.
    expect(answers.outside(['ok', 'cancelled', 'connection-failed', '503+retry-after', 'unavailable+retry-info'])).toEqual([]);
    expect(await storedHistory(queryAt(database.url), 'deadline')).toEqual(expectedHistory(reports));
    expect(asReports(await storedCurrent(queryAt(database.url), 'deadline'))).toEqual(expectedCurrent(reports));
  });
});
