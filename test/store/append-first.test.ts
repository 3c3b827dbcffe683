// --append-first (issue 40): reports acknowledged once appended to pending_report, projected after.
// What the projector makes of them — history, current state, reconcilers, hosts, commit evidence,
// and the summaries and rollouts refreshed from them — must be exactly what the full write makes of
// the same writes, whenever the projection runs, and also when a projection dies mid-batch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import { createHubMetrics } from '../../src/metrics/hub-metrics.ts';
import type { NormalizedRecord } from '../../src/model/deployment-records.ts';
import type { Database } from '../../src/store/connect.ts';
import { projectionCurrent, projectPending } from '../../src/store/projector.ts';
import { startProjectorLoop } from '../../src/store/projector-loop.ts';
import { RecordWriter } from '../../src/store/record-writer.ts';
import { refreshRollouts } from '../../src/store/rollout-refresh.ts';
import { refreshSummaries } from '../../src/store/summary-refresh.ts';
import { lockingSession } from '../support/held-writes.ts';
import { FleetBuilder, HELLO } from '../support/known-fleet.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { randomStep } from '../support/random-writes.ts';
import { seededPicker, testSeed } from '../support/seeded-random.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

let appended: { testDb: TestDatabase; database: Database };
let full: { testDb: TestDatabase; database: Database };

beforeAll(async () => {
  [appended, full] = await Promise.all([openTestDatabase(3), openTestDatabase(2)]);
});

afterAll(() => Promise.all([closeTestDatabase(appended), closeTestDatabase(full)]));

const log = createLogger('silent');

/** Two writers of the same records at the same receipt times: one appends first, one writes in full. */
function writers(clock: { now: Date }): { appendFirst: RecordWriter; full: RecordWriter } {
  const now = () => clock.now;
  return {
    appendFirst: new RecordWriter(appended.database.db, log, { retryAfterSeconds: 1, now, appendFirst: { appended: () => undefined } }),
    full: new RecordWriter(full.database.db, log, { retryAfterSeconds: 1, now }),
  };
}

// Generated ids and the times a row was made (the database's clock) differ between the two.
const TABLES = [
  'deployment_state', 'deployment_state_history', 'reconciler', 'host', 'endpoint_commit', 'commit_succession', 'target_commit',
  'summary_reconciler', 'endpoint_status_count', 'drift_item', 'host_summary', 'rollout', 'rollout_laggard',
];

/** Every derived table, row by row (as sorted JSON), ids of history and rows' own creation times left out. */
async function derived(testDb: TestDatabase): Promise<Record<string, string[]>> {
  const tables: Record<string, string[]> = {};
  for (const table of TABLES) {
    const rows = await testDb.query<{ row: string }>(`SELECT (to_jsonb(t) - 'id' - 'created_at' - 'refreshed_at' - 'first_seen_at')::text AS row FROM ${table} t`);
    tables[table] = rows.map((r) => r.row).sort();
  }
  return tables;
}

async function refreshed(database: Database, at: Date): Promise<void> {
  await refreshSummaries(database.db, { wait: true, at });
  await refreshRollouts(database.db, { wait: true });
}

const pendingCount = async (): Promise<number> =>
  (await appended.testDb.query<{ n: number }>('SELECT count(*)::int AS n FROM pending_report'))[0]!.n;

describe('the projector (--append-first)', () => {
  it('makes of a random sequence of writes exactly what the full write makes, however far behind it runs', async () => {
    const seed = testSeed();
    const random = seededPicker(seed);
    const t0 = Date.now() - 24 * 60 * 60_000;
    const fleet = new FleetBuilder(appended.database.db, t0);
    const hosts = Array.from({ length: 6 }, () => randomName('host'));
    const commits = Array.from({ length: 4 }, () => randomCommit());
    const clock = { now: new Date(t0) };
    const { appendFirst, full: fullWriter } = writers(clock);
    let minutes = 0;
    let leftPending = 0;
    for (let step = 0; step < 30; step += 1) {
      minutes += random.int(20);
      clock.now = new Date(t0 + minutes * 60_000 + 1_000);
      // Mostly reports (appended), now and then descriptors and removals (written in full, after
      // what is pending is folded in).
      const records: NormalizedRecord[] = randomStep(random, fleet, { hosts, commits, minute: minutes, maxRecords: 10, weights: { states: 12, descriptors: 2, removals: 1 } });
      await appendFirst.write(records);
      await fullWriter.write(records);
      // The projection runs after some steps only: several acknowledged writes fold in one batch.
      if (random.int(3) > 0) {
        leftPending += Number((await pendingCount()) > 0);
        continue;
      }
      await projectionCurrent(appended.database.db);
      expect(await pendingCount()).toBe(0);
      await Promise.all([refreshed(appended.database, clock.now), refreshed(full.database, clock.now)]);
      expect(await derived(appended.testDb), `seed ${seed}, step ${step}`).toEqual(await derived(full.testDb));
    }
    // Batches of several writes were folded, not only one at a time.
    expect(leftPending).toBeGreaterThan(0);
  }, 180_000);

  it('restarts a batch killed mid-way from its first report: nothing lost, nothing twice', async () => {
    const clock = { now: new Date() };
    const { appendFirst, full: fullWriter } = writers(clock);
    const fleet = new FleetBuilder(appended.database.db, Date.now());
    const [host, other] = [randomName('crash'), randomName('crash')];
    const [c1, c2] = [randomCommit(), randomCommit()];
    const writes: NormalizedRecord[][] = [
      [fleet.descriptor(HELLO, 'dev', '3.0', c1, 30)],
      [fleet.state(host, HELLO, 'dev', c1, 'in_progress', 20), fleet.state(other, HELLO, 'dev', c1, 'success', 19)],
      [fleet.state(host, HELLO, 'dev', c1, 'success', 10), fleet.state(other, HELLO, 'dev', c2, 'failure', 9)],
      [fleet.state(host, HELLO, 'dev', c2, 'success', 5), fleet.state(host, HELLO, 'dev', c1, 'success', 15)],
    ];
    for (const [index, records] of writes.entries()) {
      clock.now = new Date(Date.now() + index);
      await appendFirst.write(records);
      await fullWriter.write(records);
    }
    expect(await pendingCount()).toBe(6);

    // History locked: the projection takes its reports, folds the first receipt's and waits at its
    // history rows; its session is then killed, as when the hub or its connection dies.
    const locker = lockingSession(appended.testDb.url);
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE deployment_state_history IN EXCLUSIVE MODE');
    const killed = projectPending(appended.database.db, { wait: true, limit: 100 });
    killed.catch(() => undefined);
    const [waiting] = await waitFor(async () => {
      const rows = await appended.testDb.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%deployment_state_history%'`,
      );
      return rows.length > 0 ? rows : undefined;
    }, 'the projection waiting on history');
    await appended.testDb.query('SELECT pg_terminate_backend($1)', [waiting!.pid]);
    await expect(killed).rejects.toThrow();
    await locker.query('COMMIT');
    await locker.end();
    expect(await pendingCount()).toBe(6);

    await projectionCurrent(appended.database.db);
    expect(await pendingCount()).toBe(0);
    await Promise.all([refreshed(appended.database, clock.now), refreshed(full.database, clock.now)]);
    expect(await derived(appended.testDb)).toEqual(await derived(full.testDb));
  });

  it('shows its lag and rows behind in /metrics while it cannot run, and none once it caught up', async () => {
    const fiveMinutesAgo = new Date(Date.now() - 5 * 60_000);
    const writer = new RecordWriter(appended.database.db, log, { retryAfterSeconds: 1, now: () => fiveMinutesAgo, appendFirst: { appended: () => undefined } });
    const fleet = new FleetBuilder(appended.database.db, Date.now());
    const host = randomName('lag');
    // Another hub's projection holds the lock (a session-level hold of the same advisory lock).
    const other = lockingSession(appended.testDb.url);
    await other.connect();
    await other.query(`SELECT pg_advisory_lock(hashtext('kalypso_projector'))`);
    await writer.write([fleet.state(host, HELLO, 'dev', randomCommit(), 'success', 6), fleet.state(host, HELLO, 'qa', randomCommit(), 'success', 6)]);
    await writer.write([fleet.state(host, HELLO, 'dev', randomCommit(), 'failure', 5)]);

    const metrics = createHubMetrics({ processMetrics: false });
    const loop = startProjectorLoop(appended.database.db, { clock: () => new Date(), metrics, log, tuning: { idleMs: 20 } });
    const metric = async (name: string): Promise<number> => (await metrics.registry.getSingleMetric(name)!.get()).values[0]?.value ?? NaN;
    try {
      await waitFor(async () => (await metric('kalypso_projection_rows_behind')) === 3, 'three rows behind');
      expect(await metric('kalypso_projection_lag_seconds')).toBeGreaterThanOrEqual(300);
      expect(await metric('kalypso_projected_reports_total')).toBe(0);
      await other.query(`SELECT pg_advisory_unlock(hashtext('kalypso_projector'))`);
      await waitFor(async () => (await metric('kalypso_projection_rows_behind')) === 0, 'caught up');
      expect(await metric('kalypso_projection_lag_seconds')).toBe(0);
      expect(await metric('kalypso_projected_reports_total')).toBe(3);
      expect(await pendingCount()).toBe(0);
    } finally {
      await loop.stop();
      await other.end();
    }
  });
});
