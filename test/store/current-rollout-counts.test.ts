// schema/0033 keeps, per current rollout, the sums kalypso_current_rollouts matched from the
// summaries' counts at every call (schema/0023), and both refreshes keep them: the summary refresh
// (a trigger on endpoint_status_count) and the rollout refresh. After every refresh of a random
// sequence of writes — run in either order, so that each one alone must bring the counts up to date
// — the kept rows equal a recount, and the judgement of now read from them equals the judgement of
// schema/0023 (its text read from that released migration) at the refresh's cut and at cuts a few
// minutes either side, for the whole fleet and for a few targets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/connect.ts';
import { publishHubSettings } from '../../src/store/hub-settings.ts';
import { refreshRollouts } from '../../src/store/rollout-refresh.ts';
import { refreshSummaries } from '../../src/store/summary-refresh.ts';
import { ENVIRONMENTS } from '../support/known-fleet.ts';
import { randomStep, randomWriteFleet } from '../support/random-writes.ts';
import { releasedFunction } from '../support/rollout-recount.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

const STALE_AFTER_MS = 10 * 60_000;
let testDb: TestDatabase;
let database: Database;
let oracle: string;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase(2));
  await publishHubSettings(database.db, { staleAfterMs: STALE_AFTER_MS, environmentOrder: [...ENVIRONMENTS] });
  const released = await releasedFunction('0023_current_rollouts_plan', 'kalypso_current_rollouts');
  await testDb.query(released.sql);
  oracle = released.name;
});

afterAll(() => closeTestDatabase({ testDb, database }));

const KEPT = 'SELECT * FROM current_rollout_count ORDER BY assignment_id';

/** The kept rows recounted from nothing, in a transaction rolled back. */
async function recounted(): Promise<unknown[]> {
  return await testDb.rolledBack(async (client) => {
    await client.query('DELETE FROM current_rollout_count');
    await client.query('SELECT kalypso_count_current_rollouts(ARRAY(SELECT id FROM manifests_endpoint))');
    return (await client.query(KEPT)).rows;
  });
}

/** Every current rollout judged by `judge` at three cuts around `at`'s, for the fleet and for its first two targets. */
async function judged(judge: string, at: Date): Promise<unknown[]> {
  return await testDb.query(
    `SELECT x.minutes, f.few, r.*
       FROM unnest('{-3,0,3}'::int[]) AS x(minutes)
      CROSS JOIN unnest('{false,true}'::boolean[]) AS f(few)
      CROSS JOIN LATERAL ${judge}(
              $1::timestamptz - (SELECT stale_after FROM hub_settings) + x.minutes * interval '1 minute',
              CASE WHEN f.few THEN ARRAY(SELECT t.id FROM deployment_target t ORDER BY t.id LIMIT 2) END) r
      ORDER BY 1, 2, 3`,
    [at],
  );
}

describe('the counts kept per current rollout', () => {
  it('equal a recount, and judge now as matching the summaries at every call did, after every refresh of random writes', async () => {
    const { seed, random, t0, fleet, hosts, commits } = randomWriteFleet(database.db);
    let minutes = 0;
    let verdicts = 0;
    const statuses = new Set<unknown>();
    for (let step = 0; step < 30; step += 1) {
      // Time moves on, now and then past stale-after for the hosts that stay silent.
      minutes += random.int(8);
      const records = randomStep(random, fleet, { hosts, commits, minute: minutes, maxRecords: 10, weights: { states: 8, descriptors: 3, removals: 1 } });
      await fleet.write(records);
      const at = new Date(t0 + minutes * 60_000);
      const summaries = () => refreshSummaries(database.db, { wait: true, at });
      const rollouts = () => refreshRollouts(database.db, { wait: true });
      const summariesFirst = random.int(2) === 0;
      await (summariesFirst ? summaries() : rollouts());
      await (summariesFirst ? rollouts() : summaries());
      const context = `seed ${seed}, step ${step}, ${summariesFirst ? 'summaries' : 'rollouts'} refreshed first`;
      expect(await testDb.query(KEPT), context).toEqual(await recounted());
      const now = await judged('kalypso_current_rollouts', at);
      expect(now, context).toEqual(await judged(oracle, at));
      verdicts += now.length;
      for (const row of now) statuses.add((row as { status: unknown }).status);
    }
    // Verdicts were compared, and not all of one kind.
    expect(verdicts).toBeGreaterThan(0);
    expect(statuses.size).toBeGreaterThan(1);
  }, 180_000);
});
