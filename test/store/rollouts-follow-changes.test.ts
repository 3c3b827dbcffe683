// The rollout table is refreshed only where a writer queued a change (rollout-refresh.ts). After
// every refresh of a random sequence of writes — reports on and off the rollouts' commits, late
// ones, reconcilers moving between endpoints, new and late assignments, removals and revivals —
// it holds exactly what a recount of every rollout from the whole history finds: no change may
// leave a rollout stale until some later report happens to reach it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/connect.ts';
import { refreshRollouts } from '../../src/store/rollout-refresh.ts';
import { FleetBuilder, GREETER, HELLO } from '../support/known-fleet.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { randomStep } from '../support/random-writes.ts';
import { seededPicker, testSeed } from '../support/seeded-random.ts';
import { rederiveEveryRollout } from '../support/rollout-recount.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

let testDb: TestDatabase;
let database: Database;

beforeAll(async () => ({ testDb, database } = await openTestDatabase(2)));

afterAll(() => closeTestDatabase({ testDb, database }));

type Query = (text: string) => Promise<unknown[]>;

/** Every rollout's figures and laggards, by the names they concern (ids are the database's). */
async function rollouts(query: Query): Promise<unknown> {
  return {
    rollouts: await query(
      `SELECT me.endpoint, t.name AS target, o.assigned_at, o.gitops_commit_id, o.superseded_at, o.subscribers, o.succeeded, o.failed,
              o.first_success_at, o.converged_50_at, o.converged_90_at, o.converged_at, o.first_failure_at, o.restored_at
         FROM rollout o JOIN deployment_target t ON t.id = o.deployment_target_id JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
        ORDER BY 1, 2, 3, 4`,
    ),
    laggards: await query(
      `SELECT me.endpoint, t.name AS target, o.assigned_at, o.gitops_commit_id, l.position, h.name AS host, l.succeeded_at, l.behind_seconds
         FROM rollout_laggard l JOIN rollout o ON o.assignment_id = l.assignment_id
         JOIN deployment_target t ON t.id = o.deployment_target_id JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
         JOIN host h ON h.id = l.host_id
        ORDER BY 1, 2, 3, 4, 5`,
    ),
  };
}

/** Every rollout recounted from the whole history, in a transaction that is rolled back. */
async function recounted(): Promise<unknown> {
  return await testDb.rolledBack(async (client) => {
    await rederiveEveryRollout(client);
    return await rollouts(async (text) => (await client.query(text)).rows);
  });
}

describe('the rollouts a refresh keeps', () => {
  it('are what a recount from the whole history finds, after every refresh of a random sequence of writes', async () => {
    const seed = testSeed();
    const random = seededPicker(seed);
    const fleet = new FleetBuilder(database.db, Date.now() - 24 * 60 * 60_000);
    const hosts = Array.from({ length: 8 }, () => randomName('host'));
    const commits = Array.from({ length: 5 }, () => randomCommit());
    let minutes = 0;
    let compared = 0;
    for (let step = 0; step < 40; step += 1) {
      // Time moves on; a step's writes are of now, some late.
      minutes += random.int(20);
      const records = randomStep(random, fleet, { hosts, commits, minute: minutes, maxRecords: 12, weights: { states: 8, descriptors: 3, removals: 1 } });
      await fleet.write(records);
      await refreshRollouts(database.db, { wait: true });
      const kept = (await rollouts((text) => testDb.query(text))) as { rollouts: unknown[] };
      expect(kept, `seed ${seed}, step ${step}`).toEqual(await recounted());
      compared += kept.rollouts.length;
    }
    // Rollouts were compared, not only empty lists.
    expect(compared).toBeGreaterThan(0);
  }, 180_000);

  it('refresh the rollout a commit leaves when a late descriptor shows it came after a newer assignment', async () => {
    // Rare in the field, and so rare in the random sequences: a commit C, carried to the rollout of
    // A, is later witnessed after X, whose descriptor arrives late and more than an hour after the
    // rollout of A was superseded. C's successes no longer count for A's rollout.
    const fleet = new FleetBuilder(database.db, Date.now());
    const [a, b, c, x] = [randomCommit(), randomCommit(), randomCommit(), randomCommit()];
    const [first, second, third] = [randomName('host'), randomName('host'), randomName('host')];
    // Versions of their own: the random sequence above may have left 1.x assigned on the same target.
    await fleet.write([fleet.descriptor(HELLO, 'dev', '7.0', a, 300), fleet.descriptor(HELLO, 'dev', '8.0', b, 280)]);
    // `first` applies A then C (C came after A: it carries 7.0); `second` applies only C.
    await fleet.write([fleet.state(first, HELLO, 'dev', a, 'success', 290), fleet.state(second, HELLO, 'dev', c, 'success', 285)]);
    await fleet.write([fleet.state(first, HELLO, 'dev', c, 'success', 270)]);
    await fleet.write([fleet.state(third, HELLO, 'dev', x, 'success', 140), fleet.state(third, HELLO, 'dev', c, 'success', 130)]);
    await refreshRollouts(database.db, { wait: true });
    const succeededOfA = async (): Promise<unknown> =>
      (await testDb.query(`SELECT succeeded FROM rollout WHERE gitops_commit_id = $1`, [a]))[0]?.['succeeded'];
    expect(await succeededOfA()).toBe(2);
    // X's descriptor, late: C came after X (witnessed by `third`), so C carries 9.0 now.
    await fleet.write([fleet.descriptor(HELLO, 'dev', '9.0', x, 150)]);
    await refreshRollouts(database.db, { wait: true });
    expect(await succeededOfA()).toBe(1);
    expect(await rollouts((text) => testDb.query(text))).toEqual(await recounted());
  });

  it('leave a reconciler removed after it reported the same commit on two endpoints at one instant', async () => {
    // Found by seed 223654: history kept one of the two reports (its unique key had no endpoint),
    // the current state the other; the removal then queued only the endpoint history named.
    const fleet = new FleetBuilder(database.db, Date.now());
    const [a, c] = [randomCommit(), randomCommit()];
    const host = randomName('host');
    const subscribers = async (): Promise<number[]> =>
      (await testDb.query(
        `SELECT o.subscribers FROM rollout o JOIN deployment_target t ON t.id = o.deployment_target_id
           JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id WHERE o.gitops_commit_id = $1 ORDER BY me.endpoint`,
        [a],
      )).map((row) => row['subscribers'] as number);
    // The random sequence above may have left reconcilers on these endpoints: counted from theirs.
    await fleet.write([fleet.descriptor(GREETER, 'dev', '11.0', a, 60), fleet.descriptor(GREETER, 'staging', '11.0', a, 60)]);
    await refreshRollouts(database.db, { wait: true });
    const before = await subscribers();
    expect(before).toHaveLength(2);
    await fleet.write([fleet.state(host, GREETER, 'staging', c, 'success', 30), fleet.state(host, GREETER, 'dev', c, 'success', 30)]);
    const history = await testDb.query(
      `SELECT count(*)::int AS n FROM deployment_state_history h JOIN reconciler r ON r.id = h.reconciler_id
         JOIN host x ON x.id = r.host_id WHERE x.name = $1`, [host]);
    expect(history[0]?.['n']).toBe(2);
    await refreshRollouts(database.db, { wait: true });
    expect(await subscribers()).toEqual(before.map((n) => n + 1));
    await fleet.write([{ kind: 'reconciler-removed', host, reconciler: `flux-system/${GREETER.workload}`, removedAt: fleet.ago(30) }]);
    await refreshRollouts(database.db, { wait: true });
    expect(await subscribers()).toEqual(before);
    expect(await rollouts((text) => testDb.query(text))).toEqual(await recounted());
  });
});

