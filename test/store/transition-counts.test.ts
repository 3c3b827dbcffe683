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
import { descriptorRecord, stateRecord } from '../support/records.ts';
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

  it('are summed by minute for the targets chosen, whether every endpoint is chosen or some', async () => {
    const writer = new RecordWriter(database.db, createLogger('silent'), { retryAfterSeconds: 1, now: () => NOW });
    const endpoint = (n: number) => `https://github.com/contoso/gitops/main/e${n}`;
    const at = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000);
    // e0 and e1 serve dev, e2 prod; e3 serves no target yet (its reconcilers reported before any descriptor).
    const served: [number, string, string][] = [[0, 'dev', 'a'], [1, 'dev', 'b'], [2, 'prod', 'a']];
    await writer.write(served.map(([n, environment, application]) =>
      descriptorRecord({ environment, application, workload: `w${n}`, target: `t${n}`, endpoint: endpoint(n), version: '1.0', commit: 'c-0', at: at(300) })));
    await writer.write(Array.from({ length: 60 }, () => stateRecord({
      host: `h-${random.int(6)}`, reconciler: `r-${random.int(3)}`, endpoint: endpoint(random.int(4)), commit: `c-${random.int(5)}`,
      status: random.pick(STATUSES), at: at(random.int(180)),
    })));
    const since = at(240);
    const until = NOW;
    const summed = (environments: string[] | null, applications: string[] | null) =>
      testDb.query(`SELECT bucket, success::int, failure::int, in_progress::int FROM kalypso_transition_counts($1, $2, $3, NULL, $4) ORDER BY 1`,
        [since, until, environments, applications]);
    const recount = (environments: string[] | null, applications: string[] | null) =>
      testDb.query(`
        SELECT date_bin('1 minute', h.observed_at, 'epoch') AS bucket, count(*) FILTER (WHERE h.status = 'success')::int AS success,
               count(*) FILTER (WHERE h.status = 'failure')::int AS failure, count(*) FILTER (WHERE h.status = 'in_progress')::int AS in_progress
          FROM deployment_state_history h
         -- The range chooses minutes, as the counts are kept: a report within until's minute counts.
         WHERE date_bin('1 minute', h.observed_at, 'epoch') BETWEEN $1 AND $2
           AND h.manifests_endpoint_id IN (SELECT t.manifests_endpoint_id FROM kalypso_deployment_target t
                                            WHERE ($3::text[] IS NULL OR t.environment = ANY ($3)) AND ($4::text[] IS NULL OR t.application = ANY ($4)))
         GROUP BY 1 ORDER BY 1`, [since, until, environments, applications]);
    const choices: [string[] | null, string[] | null][] = [[null, null], [['dev', 'prod'], null], [['dev'], null], [null, ['a']], [['prod'], ['b']]];
    const unnamed = async () => (await testDb.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM manifests_endpoint WHERE id NOT IN (SELECT manifests_endpoint_id FROM deployment_target)'))[0]!.n;
    // Some endpoints serve no target: every choice matches the counts to the endpoints chosen.
    expect(await unnamed()).toBeGreaterThan(0);
    for (const [environments, applications] of choices) expect(await summed(environments, applications)).toEqual(await recount(environments, applications));
    expect((await summed(null, null)).length).toBeGreaterThan(5);
    // Every endpoint serves a target now: with every target chosen, nothing is matched.
    const orphans = await testDb.query<{ endpoint: string }>(
      'SELECT endpoint FROM manifests_endpoint WHERE id NOT IN (SELECT manifests_endpoint_id FROM deployment_target) ORDER BY 1');
    await writer.write(orphans.map((row, n) =>
      descriptorRecord({ environment: 'prod', application: 'c', workload: `u${n}`, target: `u${n}`, endpoint: row.endpoint, version: '1.0', commit: 'c-0', at: at(300) })));
    expect(await unnamed()).toBe(0);
    for (const [environments, applications] of [...choices, [['dev', 'prod'], ['a', 'b', 'c']] as [string[], string[]]]) {
      expect(await summed(environments, applications)).toEqual(await recount(environments, applications));
    }
    await foldTransitionCounts(database.db, null);
    expect(await summed(null, null)).toEqual(await recount(null, null));
  });
});
