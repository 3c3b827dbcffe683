// PostgreSQL answers slowly (another session holds a lock the writes need) while collectors
// flood the hub. The hub must keep a bounded queue: exports past it are told "overloaded, retry
// later" at once instead of piling up in memory, and once the database moves again every
// retried report is stored exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodedSizeEstimate, retainedSizeBound } from '../../src/sources/otlp/decode-memory.ts';
import { holdWrites } from '../support/held-writes.ts';
import { freeHubPorts, type HubProcess, killHub, spawnHub, waitHubReady } from '../support/hub-process.ts';
import { expectedCurrent, expectedHistory, protobufBatch, reportSet } from '../support/report-stream.ts';
import { AnswerLog, grpcRetryingExporter, httpRetryingExporter } from '../support/retrying-exporter.ts';
import { asReports, queryAt, storedCurrent, storedHistory } from '../support/stored-reports.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

const SOAK = process.env.KALYPSO_SOAK === '1';
/** --db-pool-size 4 leaves 2 concurrent writes; the hub queues 64 more (src/hub.ts). */
const WRITING = 2;
const QUEUED = 64;
const EXPORTS = SOAK ? 600 : 200;
const PADDING_BYTES = 256 * 1024;
const MiB = 1024 * 1024;

let database: TestDatabase;
let hub: HubProcess | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await killHub(hub);
  await database?.drop();
});

async function metric(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
}

describe('PostgreSQL slow under a flood of exports', () => {
  it('refuses the excess at once with retryable answers, stays within bounded memory, and stores everything once', async () => {
    // The production heap settings (npm start), so that unbounded buffering would show.
    hub = spawnHub(database.url, await freeHubPorts(), ['--db-pool-size', '4'], ['--max-semi-space-size=32', '--max-old-space-size=256']);
    const running = hub;
    await waitHubReady(running);
    const reports = reportSet('slow', EXPORTS, 1);
    const bodies = await Promise.all(reports.map((report) => protobufBatch([report], PADDING_BYTES)));
    const rssBefore = await running.rss();

    const locker = await holdWrites(database.url, 'LOCK TABLE deployment_state IN ACCESS EXCLUSIVE MODE');

    const answers = new AnswerLog();
    // A long client deadline: the exports that the hub queues simply wait for the lock.
    const options = { attemptTimeoutMs: 120_000, giveUpAfterMs: 120_000 };
    const grpcExporter = grpcRetryingExporter(running.ports.otlpGrpc, answers, options);
    const httpExporter = httpRetryingExporter(running.ports.otlpHttp, answers, options);
    let peakRss = rssBefore;
    const sampler = setInterval(() => {
      running.rss().then(
        (rss) => (peakRss = Math.max(peakRss, rss)),
        () => undefined,
      );
    }, 50);
    const sends = bodies.map((body, i) => (i % 2 === 0 ? grpcExporter.send(body) : httpExporter.send(body)));
    const done = Promise.all(sends);
    done.catch(() => undefined);

    // Every export beyond what the hub writes and queues is refused — and refused again on retry,
    // as long as the lock holds.
    await waitFor(
      () => answers.attempts.filter((attempt) => attempt.kind !== 'ok').length >= (EXPORTS - WRITING - QUEUED) * 2,
      'the excess refused, twice over',
      30_000,
    );
    // Two bounds hold what the hub keeps: the queue, and the memory budget for decoded requests
    // (src/sources/otlp/decode-memory.ts): a request is taken only if its decoding fits beside what
    // the exports already waiting hold (one state report each; the padding is a log the hub ignores).
    // The tighter wins.
    const budget = await metric(running.ports.http, 'kalypso_ingest_decode_memory_budget_bytes');
    const holds = bodies.map((body) => retainedSizeBound(body.length, 1));
    const decodes = bodies.map((body) => decodedSizeEstimate(body.length, 'protobuf'));
    const fitting = [
      Math.floor((budget - Math.max(...decodes)) / Math.max(...holds)) + 1,
      Math.floor((budget - Math.min(...decodes)) / Math.min(...holds)) + 1,
    ];
    const inFlight = await metric(running.ports.http, 'kalypso_store_writes_in_flight');
    expect(inFlight).toBeGreaterThanOrEqual(Math.min(WRITING + QUEUED, fitting[0]!));
    expect(inFlight).toBeLessThanOrEqual(Math.min(WRITING + QUEUED, fitting[1]!));
    expect(await metric(running.ports.http, 'kalypso_ingest_decode_memory_reserved_bytes')).toBeLessThanOrEqual(budget);
    const refused = answers.attempts.filter((attempt) => attempt.kind !== 'ok');
    expect(answers.outside(['unavailable+retry-info', '503+retry-after'])).toEqual([]);
    expect(refused.every((attempt) => attempt.detail.includes('hub overloaded'))).toBe(true);
    // "At once": not held until the lock is released (it still is), nor refused after waiting for a
    // slot. The hub has no such wait, so a refusal takes as long as reading the request on a CPU that
    // 200 senders retrying 256 KiB keep busy: under 5 s alone on a 2-core machine, 7 s seen with other
    // suites running beside it. 15 s is still far below the 120 s the exporters would wait for.
    expect(Math.max(...refused.map((attempt) => attempt.ms))).toBeLessThan(15_000);
    clearInterval(sampler);
    // The flood carries EXPORTS × 256 KiB (50 MiB in the fast variant) and is sent over and
    // over; the hub may hold what it queues, but not every request it has refused.
    const grownMiB = (peakRss - rssBefore) / MiB;
    expect(grownMiB, `RSS grew by ${grownMiB.toFixed(0)} MiB`).toBeLessThan(150);

    await locker.query('COMMIT');
    await locker.end();
    await done;
    grpcExporter.close();
    expect(answers.counts().ok).toBe(EXPORTS);
    const query = queryAt(database.url);
    expect(await storedHistory(query, 'slow')).toEqual(expectedHistory(reports));
    expect(asReports(await storedCurrent(query, 'slow'))).toEqual(expectedCurrent(reports));
  }, 180_000);
});
