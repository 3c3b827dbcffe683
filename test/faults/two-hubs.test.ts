// Two hub processes write one database at once (replicas behind a Service), fed overlapping,
// shuffled, out-of-order streams about the same reconcilers, some reports delivered to both.
// The result must be exactly what one hub makes of the same reports in another database — no
// lost update, no duplicate, no deadlock or unique violation surfacing to a client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeHubPorts, type HubProcess, killHub, spawnHub, waitHubReady } from '../support/hub-process.ts';
import { chunks, expectedCurrent, expectedHistory, protobufBatch, type Report, reportSet, seededRandom, shuffled } from '../support/report-stream.ts';
import { AnswerLog, grpcRetryingExporter, httpRetryingExporter, type RetryingExporter } from '../support/retrying-exporter.ts';
import { asReports, queryAt, storedCurrent, storedHistory } from '../support/stored-reports.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

const SOAK = process.env.KALYPSO_SOAK === '1';

let shared: TestDatabase;
let single: TestDatabase;
const hubs: HubProcess[] = [];

beforeAll(async () => {
  [shared, single] = await Promise.all([createTestDatabase(), createTestDatabase()]);
});

afterAll(async () => {
  for (const hub of hubs) await killHub(hub);
  await Promise.all([shared?.drop(), single?.drop()]);
});

async function startHub(databaseUrl: string, flags: readonly string[] = []): Promise<HubProcess> {
  const hub = spawnHub(databaseUrl, await freeHubPorts(), flags);
  hubs.push(hub);
  await waitHubReady(hub);
  return hub;
}

/** Sends the reports in batches, spread over a gRPC and an HTTP client of the hub, all at once. */
async function feed(hub: HubProcess, reports: readonly Report[], batchSize: number, answers: AnswerLog): Promise<void> {
  const batches = await Promise.all(chunks(reports, batchSize).map((batch) => protobufBatch(batch)));
  const exporters: RetryingExporter[] = [grpcRetryingExporter(hub.ports.otlpGrpc, answers), httpRetryingExporter(hub.ports.otlpHttp, answers)];
  await Promise.all(
    exporters.map(async (exporter, i) => {
      for (let b = i; b < batches.length; b += exporters.length) await exporter.send(batches[b]!);
    }),
  );
  for (const exporter of exporters) exporter.close();
}

/** --append-first: acknowledged reports are projected after; wait until none is pending. */
async function projected(url: string): Promise<void> {
  await waitFor(async () => (await queryAt(url)<{ n: number }>('SELECT count(*)::int AS n FROM pending_report'))[0]!.n === 0, 'every report projected');
}

// Each mode on databases of its own; with --append-first both hubs acknowledge, and whichever
// holds the projector's lock folds what both appended.
describe.each([
  { mode: 'every report folded in before it is acknowledged', flags: [], prefix: 'twohubs' },
  { mode: '--append-first', flags: ['--append-first'], prefix: 'afhubs' },
])('two hubs on one database ($mode)', ({ flags, prefix }) => {
  it('store overlapping streams exactly as one hub stores them', async () => {
    const random = seededRandom(6);
    const reports = reportSet(prefix, SOAK ? 200 : 24, SOAK ? 30 : 8);
    const batchSize = SOAK ? 25 : 6;
    // Each report goes to one of the two hubs at random; a third of them to both (a collector
    // retrying against another replica after a lost answer).
    const first: Report[] = [];
    const second: Report[] = [];
    for (const report of reports) {
      const draw = random();
      if (draw < 2 / 3) first.push(report);
      if (draw < 1 / 3 || draw >= 2 / 3) second.push(report);
    }
    const [hubA, hubB, hubSingle] = await Promise.all([startHub(shared.url, flags), startHub(shared.url, flags), startHub(single.url)]);

    const answers = new AnswerLog();
    await Promise.all([
      feed(hubA, shuffled(first, random), batchSize, answers),
      feed(hubB, shuffled(second, random), batchSize, answers),
      feed(hubSingle, shuffled([...first, ...second], random), batchSize, answers),
    ]);

    // Not even a retryable refusal: concurrent writers must not conflict visibly.
    expect(answers.outside(['ok'])).toEqual([]);
    await projected(shared.url);
    const [sharedHistory, singleHistory] = await Promise.all([
      storedHistory(queryAt(shared.url), prefix),
      storedHistory(queryAt(single.url), prefix),
    ]);
    expect(sharedHistory).toEqual(singleHistory);
    expect(sharedHistory).toEqual(expectedHistory(reports));
    const [sharedCurrent, singleCurrent] = await Promise.all([
      storedCurrent(queryAt(shared.url), prefix),
      storedCurrent(queryAt(single.url), prefix),
    ]);
    expect(sharedCurrent).toEqual(singleCurrent);
    expect(asReports(sharedCurrent)).toEqual(expectedCurrent(reports));
  }, SOAK ? 600_000 : 60_000);
});
