// State transitions counted per minute, endpoint and status (schema/0028): whatever writes history
// — concurrent writers, duplicates refused, rows moved into a new month's partition, retention —
// the counts Grafana reads (kalypso_transition_counts: folded, or still queued) are a recount of the
// history, before and after the summary refresh timer folds the queue. What the panel draws from them:
// test/grafana/dashboards.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import type { Database } from '../../src/store/connect.ts';
import { maintainHistoryPartitions } from '../../src/store/history-partitions.ts';
import { RecordWriter } from '../../src/store/record-writer.ts';
import { foldTransitionCounts } from '../../src/store/summary-refresh.ts';
import { stateRecord } from '../support/records.ts';
import { seededPicker, testSeed } from '../support/seeded-random.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

const NOW = new Date(Date.UTC(2026, 10, 21));
let testDb: TestDatabase;
let database: Database;

beforeAll(async () => ({ testDb, database } = await openTestDatabase(4)));

afterAll(() => closeTestDatabase({ testDb, database }));

const seed = testSeed();
const random = seededPicker(seed);
const STATUSES = ['success', 'failure', 'in_progress'] as const;

/** Reports of a few hosts on a few endpoints, at times spread over `months` (some in the same minute). */
function randomReports(count: number, months: readonly [year: number, month: number][]) {
  return Array.from({ length: count }, () => {
    const [year, month] = random.pick(months);
    return stateRecord({
      host: `h-${random.int(6)}`,
      reconciler: `r-${random.int(3)}`,
      endpoint: `https://github.com/contoso/gitops/main/e${random.int(4)}`,
      commit: `c-${random.int(5)}`,
      status: random.pick(STATUSES),
      at: new Date(Date.UTC(year, month - 1, 1 + random.int(27), random.int(3), random.int(4), random.int(60))),
    });
  });
}

const counted = () =>
  testDb.query(`SELECT bucket, manifests_endpoint_id, status::text AS status, sum(transitions)::int AS n
                  FROM (SELECT * FROM transition_count UNION ALL SELECT * FROM transition_count_queue) c GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`);
const recounted = () =>
  testDb.query(`SELECT date_bin('1 minute', observed_at, 'epoch') AS bucket, manifests_endpoint_id, status::text AS status, count(*)::int AS n
                  FROM deployment_state_history GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`);
const queued = async () => (await testDb.query<{ n: number }>('SELECT count(*)::int AS n FROM transition_count_queue'))[0]!.n;

describe(`transitions counted per minute (seed ${seed})`, () => {
  it('are a recount of the history through concurrent writes, folds, new partitions and retention', async () => {
    await maintainHistoryPartitions(database.db, { retentionMs: 0, now: new Date(Date.UTC(2026, 6, 1)) }); // July–September
    const writers = Array.from({ length: 3 }, () => new RecordWriter(database.db, createLogger('silent'), { retryAfterSeconds: 1, now: () => NOW }));
    // Some months have no partition yet (the default one), 1999 never will.
    const months: [number, number][] = [[1999, 1], [2026, 7], [2026, 8], [2026, 11], [2026, 12]];
    const batches = Array.from({ length: 6 }, () => randomReports(40, months));
    await Promise.all(writers.map(async (writer, index) => {
      for (const batch of batches.filter((_, at) => at % writers.length === index)) await writer.write(batch);
    }));
    // A batch delivered again: duplicates are refused and not counted.
    await writers[0]!.write(batches[0]!);
    expect((await recounted()).length).toBeGreaterThan(10);
    expect(await queued()).toBeGreaterThan(0);
    expect(await counted()).toEqual(await recounted());

    // A bounded fold takes part of the queue; the counts read the same all along.
    const waiting = await queued();
    expect(await foldTransitionCounts(database.db, 5)).toBe(5);
    expect(await queued()).toBe(waiting - 5);
    expect(await counted()).toEqual(await recounted());
    await foldTransitionCounts(database.db, null);
    expect(await queued()).toBe(0);
    expect(await counted()).toEqual(await recounted());

    // November and December get partitions: default-partition rows move, counted once.
    await maintainHistoryPartitions(database.db, { retentionMs: 0, now: NOW });
    await writers[1]!.write(randomReports(30, months));
    expect(await counted()).toEqual(await recounted());

    // 100 days before 21 November: July is dropped, and 1999's rows of the default partition.
    const before = (await recounted()).length;
    const result = await maintainHistoryPartitions(database.db, { retentionMs: 100 * 86_400_000, now: NOW });
    expect(result.partitionsDropped).toBeGreaterThanOrEqual(1);
    const after = await recounted();
    expect(after.length).toBeLessThan(before);
    expect(await counted()).toEqual(after);
    await foldTransitionCounts(database.db, null);
    expect(await counted()).toEqual(after);
  });
});
