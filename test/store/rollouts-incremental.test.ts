// Rollouts merged step by step (each refresh reads only the span of the new reports, and recounts a
// rollout from its history only when what counts changed) equal the rollouts recounted from the
// whole history, after every refresh of a random sequence of writes: reports on and off the
// rollouts' commits, late ones, new and late assignments, removed reconcilers.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import type { NormalizedRecord } from '../../src/model/deployment-records.ts';
import { connectDatabase, type Database } from '../../src/store/connect.ts';
import { refreshRollouts } from '../../src/store/rollout-refresh.ts';
import { CART, ENVIRONMENTS, FleetBuilder, GREETER, HELLO } from '../support/known-fleet.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const WORKLOADS = [HELLO, GREETER, CART];
let testDb: TestDatabase;
let database: Database;

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = connectDatabase({ url: testDb.url, poolSize: 2, connectTimeoutMs: 5_000, applicationName: 'test' }, createLogger('silent'));
});

afterAll(async () => {
  await database.close();
  await testDb.drop();
});

/** A small seeded generator, so that a failing sequence can be replayed from its seed. */
function generator(seed: number): { int(n: number): number; pick<T>(items: readonly T[]): T } {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return { int: (n) => Math.floor(next() * n), pick: (items) => items[Math.floor(next() * items.length)]! };
}

type Query = (text: string) => Promise<unknown[]>;

/** What each rollout kept of its subscribers — its first success and failure — by the names they concern. */
async function kept(query: Query): Promise<unknown[]> {
  return await query(
    `SELECT me.endpoint, t.name AS target, o.assigned_at, o.gitops_commit_id, h.name AS host, c.name AS reconciler, k.succeeded_at, k.failed_at
       FROM rollout_reconciler k JOIN rollout o ON o.assignment_id = k.assignment_id
       JOIN deployment_target t ON t.id = o.deployment_target_id JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
       JOIN reconciler c ON c.id = k.reconciler_id JOIN host h ON h.id = c.host_id
      ORDER BY 1, 2, 3, 4, 5, 6`,
  );
}

/** Every rollout's figures and laggards, by the names they concern (ids are the database's). */
async function rollouts(query: Query): Promise<unknown> {
  return {
    kept: await kept(query),
    rollouts: await query(
      `SELECT t.name AS target, me.endpoint, o.gitops_commit_id, o.assigned_at, o.superseded_at, o.subscribers, o.succeeded, o.failed,
              o.first_success_at, o.converged_50_at, o.converged_90_at, o.converged_at, o.first_failure_at, o.restored_at
         FROM rollout o JOIN deployment_target t ON t.id = o.deployment_target_id JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
        ORDER BY 2, 1, 4, 3`,
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
  const client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query('DELETE FROM rollout_laggard; DELETE FROM rollout; DELETE FROM rollout_reconciler');
    await client.query(
      `SELECT kalypso_refresh_rollouts(array_agg(id), array_agg('-infinity'::timestamptz), array_agg('infinity'::timestamptz)) FROM manifests_endpoint`,
    );
    return await rollouts(async (text) => (await client.query(text)).rows);
  } finally {
    await client.query('ROLLBACK');
    await client.end();
  }
}

describe('rollouts merged step by step', () => {
  it('keep what a recount from the whole history finds after every refresh of a random sequence of writes, and give its figures', async () => {
    // KALYPSO_TEST_SEED replays a sequence a failure names.
    const seed = Number(process.env['KALYPSO_TEST_SEED'] ?? Date.now() % 1_000_000);
    const random = generator(seed);
    const t0 = Date.now() - 24 * 60 * 60_000;
    const fleet = new FleetBuilder(database.db, t0);
    const hosts = Array.from({ length: 8 }, () => randomName('host'));
    const commits = Array.from({ length: 5 }, () => randomCommit());
    let minutes = 0;
    let compared = 0;
    for (let step = 0; step < 40; step += 1) {
      const records: NormalizedRecord[] = [];
      // Time moves on; most reports are of now, some late (up to two hours back).
      minutes += random.int(20);
      for (let n = 1 + random.int(12); n > 0; n -= 1) {
        const workload = random.pick(WORKLOADS);
        const environment = random.pick(ENVIRONMENTS);
        const kind = random.int(12);
        const at = -(minutes - (random.int(4) === 0 ? random.int(120) : 0));
        if (kind < 8) {
          const status = random.pick(['success', 'success', 'failure', 'in_progress'] as const);
          records.push(fleet.state(random.pick(hosts), workload, environment, random.pick(commits), status, at));
        } else if (kind < 11) {
          records.push(fleet.descriptor(workload, environment, `1.${random.int(3)}`, random.pick(commits), at));
        } else {
          records.push({ kind: 'reconciler-removed', host: random.pick(hosts), reconciler: `flux-system/${workload.workload}`, removedAt: fleet.ago(-minutes) });
        }
      }
      await fleet.write(records);
      await refreshRollouts(database.db, { wait: true });
      const merged = await kept((text) => testDb.query(text));
      expect(merged, `seed ${seed}, step ${step}`).toEqual(((await recounted()) as { kept: unknown[] }).kept);
      compared += merged.length;
    }
    // Then every rollout's figures, derived from what each kept: every endpoint is touched by a
    // span of reports (merged, not recounted), so that every rollout's figures are derived again.
    // (Figures of rollouts no report reached since a subscriber's current state left are not
    // compared step by step: the refresh never followed those, before this change or after.)
    await testDb.query(
      `INSERT INTO rollout_refresh_queue (manifests_endpoint_ids, from_times, to_times)
       SELECT array_agg(id), array_agg('-infinity'::timestamptz), array_agg(now()) FROM manifests_endpoint`,
    );
    await refreshRollouts(database.db, { wait: true });
    expect(await rollouts((text) => testDb.query(text)), `seed ${seed}`).toEqual(await recounted());
    // What was kept was compared, not only empty lists.
    expect(compared).toBeGreaterThan(0);
  }, 180_000);
});
