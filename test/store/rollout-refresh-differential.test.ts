// schema/0016 rewrote the rollout refresh for speed (history read once per target, names looked up
// only for possible laggards, positions in integers). The refresh of schema/0010 — its text read
// from that released migration — is the oracle: on random fleets both recount every rollout to the
// same figures and laggards, ties in success time (minute-grained reports) included. schema/0022
// rewrote it again (no plan may join two CTEs of many rows); the oracle holds it to the same results.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/connect.ts';
import { FleetBuilder } from '../support/known-fleet.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { randomStep } from '../support/random-writes.ts';
import { seededPicker, testSeed } from '../support/seeded-random.ts';
import { rederiveEveryRollout, releasedRefresh } from '../support/rollout-recount.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

let testDb: TestDatabase;
let database: Database;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase(2));
  await testDb.query((await releasedRefresh('0010_promotion_flow')).sql);
});

afterAll(() => closeTestDatabase({ testDb, database }));

/** Every rollout and laggard recounted from the whole history by `refresh`, in a transaction rolled back. */
async function recount(refresh: string): Promise<{ rollouts: unknown[]; laggards: unknown[] }> {
  return await testDb.rolledBack(async (client) => {
    await rederiveEveryRollout(client, refresh);
    return {
      rollouts: (await client.query(`SELECT o.*, NULL AS refreshed_at FROM rollout o ORDER BY assignment_id`)).rows,
      laggards: (await client.query(`SELECT * FROM rollout_laggard ORDER BY assignment_id, position`)).rows,
    };
  });
}

describe('the rollout refresh since schema/0016', () => {
  it('recounts what the refresh of schema/0010 recounts, on random fleets', async () => {
    const seed = testSeed();
    const random = seededPicker(seed);
    const fleet = new FleetBuilder(database.db, Date.now() - 24 * 60 * 60_000);
    const hosts = Array.from({ length: 30 }, () => randomName('host'));
    const commits = Array.from({ length: 5 }, () => randomCommit());
    let minutes = 0;
    let laggards = 0;
    for (let step = 0; step < 30; step += 1) {
      minutes += random.int(20);
      const records = randomStep(random, fleet, { hosts, commits, minute: minutes, maxRecords: 30, weights: { states: 11, descriptors: 2, removals: 1 } });
      await fleet.write(records);
      if (step % 5 === 4) {
        const counted = await recount('kalypso_refresh_rollouts');
        expect(counted, `seed ${seed}, step ${step}`).toEqual(await recount('kalypso_refresh_rollouts_0010'));
        laggards += counted.laggards.length;
      }
    }
    // Laggards were compared, not only empty lists.
    expect(laggards).toBeGreaterThan(0);
  }, 120_000);
});
