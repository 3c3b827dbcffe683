// schema/0036 keeps each deployment target's counts (what kalypso_environment_state summed from the
// summaries at every read, schema/0032): the summary refresh recounts the targets queued by the
// writes that change them, and the view sums the targets still queued itself. After every step of a
// random sequence of writes — before the refresh, with the queue full, and after it — the view
// answers as schema/0032's view (its text read from that released migration) does, and after the
// refresh the kept rows equal a recount from nothing and nothing is left queued.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/connect.ts';
import { publishHubSettings } from '../../src/store/hub-settings.ts';
import { refreshRollouts } from '../../src/store/rollout-refresh.ts';
import { refreshSummaries } from '../../src/store/summary-refresh.ts';
import { ENVIRONMENTS } from '../support/known-fleet.ts';
import { randomStep, randomWriteFleet } from '../support/random-writes.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

const STALE_AFTER_MS = 10 * 60_000;
const ORACLE = 'kalypso_environment_state_0032';
let testDb: TestDatabase;
let database: Database;

/** kalypso_environment_state as schema/0032 defined it, renamed: the oracle. */
async function releasedView(): Promise<string> {
  const text = await readFile(new URL('../../schema/0032_grafana_at_fleet_l.sql', import.meta.url), 'utf8');
  const start = text.indexOf('CREATE OR REPLACE VIEW kalypso_environment_state AS');
  const end = text.indexOf(';\n', start);
  if (start < 0 || end < 0) throw new Error('schema/0032 has no kalypso_environment_state');
  return text.slice(start, end + 1).replace('VIEW kalypso_environment_state AS', `VIEW ${ORACLE} AS`);
}

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase(2));
  await publishHubSettings(database.db, { staleAfterMs: STALE_AFTER_MS, environmentOrder: [...ENVIRONMENTS] });
  await testDb.query(await releasedView());
});

afterAll(() => closeTestDatabase({ testDb, database }));

const KEPT = 'SELECT * FROM target_state_count ORDER BY deployment_target_id';
const state = (view: string) => `SELECT * FROM ${view} ORDER BY workspace, application, workload, deployment_target, environment`;

/** The kept rows recounted from nothing, in a transaction rolled back. */
async function recounted(): Promise<unknown[]> {
  return await testDb.rolledBack(async (client) => {
    await client.query('DELETE FROM target_state_count');
    await client.query('SELECT kalypso_count_target_states(ARRAY(SELECT id FROM deployment_target))');
    return (await client.query(KEPT)).rows;
  });
}

async function queuedTargets(): Promise<number> {
  const rows = await testDb.query<{ n: number }>('SELECT coalesce(sum(cardinality(deployment_target_ids)), 0)::int AS n FROM target_state_count_queue');
  return rows[0]!.n;
}

describe('the counts kept per deployment target', () => {
  it('answer as summing them at every read did, before and after every refresh of random writes, and equal a recount', async () => {
    const { seed, random, t0, fleet, hosts, commits } = randomWriteFleet(database.db);
    let minutes = 0;
    let queuedReads = 0;
    const statuses = new Set<unknown>();
    for (let step = 0; step < 30; step += 1) {
      minutes += random.int(8);
      await fleet.write(randomStep(random, fleet, { hosts, commits, minute: minutes, maxRecords: 10, weights: { states: 8, descriptors: 3, removals: 1 } }));
      const at = new Date(t0 + minutes * 60_000);
      const context = `seed ${seed}, step ${step}`;
      // Written, not yet refreshed: the targets whose desired state changed are queued and summed by the view.
      if ((await queuedTargets()) > 0) queuedReads += 1;
      expect(await testDb.query(state('kalypso_environment_state')), `${context}, before the refresh`).toEqual(await testDb.query(state(ORACLE)));
      await refreshSummaries(database.db, { wait: true, at });
      await refreshRollouts(database.db, { wait: true });
      expect(await queuedTargets(), context).toBe(0);
      expect(await testDb.query(KEPT), context).toEqual(await recounted());
      const now = await testDb.query<{ status: string }>(state('kalypso_environment_state'));
      expect(now, `${context}, after the refresh`).toEqual(await testDb.query(state(ORACLE)));
      for (const row of now) statuses.add(row.status);
    }
    // The view was read with targets queued, and the targets were not all of one status.
    expect(queuedReads).toBeGreaterThan(0);
    expect(statuses.size).toBeGreaterThan(2);
  }, 180_000);

  it('are kept by the summary refresh when only the summaries change (a reconciler turns stale)', async () => {
    const live = 'SELECT count(*)::int AS n FROM target_state_count WHERE stale < reconcilers';
    // The random writes may have left every reconciler silent past stale-after at their last refresh
    // (a seed did): a sign of life from each at the newest one's time makes them live first, queued
    // by the trigger as a write's would be.
    const [{ newest }] = await testDb.query<{ newest: Date }>('SELECT max(last_seen_at) AS newest FROM deployment_state') as [{ newest: Date }];
    await testDb.query('UPDATE deployment_state SET last_observed_at = $1, last_received_at = $1', [newest]);
    await refreshSummaries(database.db, { wait: true, at: newest });
    expect((await testDb.query<{ n: number }>(live))[0]!.n).toBeGreaterThan(0);
    // A day later every reconciler is stale: the refresh moves them, and the counts per target follow.
    await refreshSummaries(database.db, { wait: true, at: new Date(Date.now() + 24 * 60 * 60_000) });
    expect((await testDb.query<{ n: number }>(live))[0]!.n).toBe(0);
    expect(await testDb.query(KEPT)).toEqual(await recounted());
    expect(await testDb.query(state('kalypso_environment_state'))).toEqual(await testDb.query(state(ORACLE)));
  }, 60_000);
});
