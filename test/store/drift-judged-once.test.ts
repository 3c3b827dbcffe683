// The drift judgement looks up the rollout of a reconciler's applied commit once per reconciler and
// target (schema/0046). schema/0012 named it once in a CTE, but the planner inlined the CTE into the
// three places that read it, and the lookup with it: a fold of 20,000 reconcilers at fleet L probed
// target_commit 60,000 times. Counted here by the transaction's own index-scan counter of
// target_commit, against the pairs that need the lookup (off the target's desired commit).
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/connect.ts';
import { writeRandomFleet } from '../support/random-writes.ts';
import { releasedFunction } from '../support/rollout-recount.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

let testDb: TestDatabase;
let database: Database;

/** Every reconciler, judged at a cut a day back. */
const JUDGE_ALL = (fn: string) => `SELECT * FROM ${fn}((SELECT array_agg(reconciler_id) FROM deployment_state), now() - interval '1 day')`;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase(2));
  // schema/0012's judgement (kalypso_judge_drift_0012), beside the current one.
  await testDb.query((await releasedFunction('0012_summaries_on_write', 'kalypso_judge_drift')).sql);
  await writeRandomFleet(database.db);
});

afterAll(() => closeTestDatabase({ testDb, database }));

/** Index scans of target_commit while `statement` runs (this transaction's counter). */
async function targetCommitProbes(client: pg.Client, statement: string): Promise<number> {
  const count = async () =>
    Number((await client.query<{ n: string }>(`SELECT idx_scan AS n FROM pg_stat_xact_user_tables WHERE relname = 'target_commit'`)).rows[0]!.n);
  const before = await count();
  await client.query(statement);
  return (await count()) - before;
}

/** The reconciler-target pairs whose applied commit is not the target's desired one: each needs the lookup. */
async function pairsOffDesiredCommit(client: pg.Client): Promise<number> {
  const result = await client.query<{ n: number }>(`
    SELECT count(*)::int AS n
      FROM deployment_state s
      JOIN deployment_target t ON t.manifests_endpoint_id = s.manifests_endpoint_id
      JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
     WHERE s.gitops_commit_id <> ca.gitops_commit_id`);
  return result.rows[0]!.n;
}

describe('the drift judgement', () => {
  it('looks the applied commit’s rollout up once for each pair off the desired commit', async () => {
    const [probes, pairs] = await testDb.rolledBack(async (client) => [await targetCommitProbes(client, JUDGE_ALL('kalypso_judge_drift')), await pairsOffDesiredCommit(client)]);
    expect(pairs).toBeGreaterThan(0);
    expect(probes).toBe(pairs);
  });

  it('schema/0012’s looked it up again where the judgement was read', async () => {
    const [probes, pairs] = await testDb.rolledBack(async (client) => [await targetCommitProbes(client, JUDGE_ALL('kalypso_judge_drift_0012')), await pairsOffDesiredCommit(client)]);
    expect(probes).toBeGreaterThan(pairs);
  });

  it('judges as schema/0012 did', async () => {
    const differing = await testDb.query(`
      SELECT 'now' AS side, * FROM (${JUDGE_ALL('kalypso_judge_drift')} EXCEPT ALL ${JUDGE_ALL('kalypso_judge_drift_0012')}) a
      UNION ALL
      SELECT '0012', * FROM (${JUDGE_ALL('kalypso_judge_drift_0012')} EXCEPT ALL ${JUDGE_ALL('kalypso_judge_drift')}) b`);
    expect(differing).toEqual([]);
    // Something drifts off the desired rollout, so that the two had something to agree on.
    const [judged] = await testDb.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${JUDGE_ALL('kalypso_judge_drift')}) j WHERE j.not_on_desired_rollout`);
    expect(judged!.n).toBeGreaterThan(0);
  });
});
