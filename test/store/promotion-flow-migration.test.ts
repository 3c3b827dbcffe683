// Migration 0010 (promotion flow) on a database written before it: the commit order is backfilled
// from history and assignments, assignments are numbered into rollouts (one per version), versions
// are carried to the commits reconcilers applied after them, the desired state is re-chosen by time
// (ties by arrival, not by hex), and the rollouts are computed again — one per version.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import { connectDatabase } from '../../src/store/connect.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { randomCommit } from '../support/random-ids.ts';
import { type SchemaBefore, schemaBefore } from '../support/schema-before.ts';

describe('migration 0010 (promotion flow)', () => {
  let schema: SchemaBefore;

  beforeAll(async () => {
    schema = await schemaBefore('0010', `kalypso_promotion_migration_${process.pid}`);
  });

  afterAll(async () => {
    await schema.drop();
  });

  it('backfills the commit order, rollouts per version and carried versions, and re-chooses the desired state by time', async () => {
    const [a, b, c, d] = [randomCommit(), randomCommit(), randomCommit(), randomCommit()];
    // Forty minutes ago: the reconciler's last report (minute 31) is fresh.
    const t0 = Date.now() - 40 * 60_000;
    const at = (minute: number) => new Date(t0 + minute * 60_000);
    const db = connectDatabase({ url: schema.url, poolSize: 2, connectTimeoutMs: 5_000, applicationName: 'test' }, createLogger('silent'));
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    try {
      expect((await migrateToLatest(db.db, schema.directory)).error).toBeUndefined();
      // As a hub of schema 0008 wrote them: 1.0 at a, then at b (a merge that kept it; the same
      // time, as a Kustomization's descriptor had), then 2.0 at c; a reconciler through a, b, c and
      // on to d, a merge nothing assigned. The old tie-break chose between a and b by hex text.
      const ids = await client.query<{ target: string; v1: string; v2: string; endpoint: string }>(
        `WITH ws AS (INSERT INTO workspace (name) VALUES ('ws') RETURNING id),
              app AS (INSERT INTO application (workspace_id, name) SELECT id, 'app' FROM ws RETURNING id),
              w AS (INSERT INTO workload (application_id, name) SELECT id, 'api' FROM app RETURNING id),
              e AS (INSERT INTO environment (name) VALUES ('dev') RETURNING id),
              me AS (INSERT INTO manifests_endpoint (endpoint) VALUES ('https://example.com/gitops/dev/api') RETURNING id),
              t AS (INSERT INTO deployment_target (workload_id, environment_id, name, manifests_endpoint_id)
                    SELECT w.id, e.id, 'main', me.id FROM w, e, me RETURNING id),
              v1 AS (INSERT INTO workload_version (workload_id, version) SELECT id, '1.0' FROM w RETURNING id),
              v2 AS (INSERT INTO workload_version (workload_id, version) SELECT id, '2.0' FROM w RETURNING id)
         SELECT t.id AS target, v1.id AS v1, v2.id AS v2, me.id AS endpoint FROM t, v1, v2, me`,
      );
      const { target, v1, v2, endpoint } = ids.rows[0]!;
      for (const [commit, version, minute] of [
        [a, v1, 0],
        [b, v1, 0],
        [c, v2, 20],
      ] as const) {
        await client.query(`INSERT INTO deployment_assignment (deployment_target_id, workload_version_id, gitops_commit_id, assigned_at) VALUES ($1, $2, $3, $4)`, [
          target,
          version,
          commit,
          at(minute),
        ]);
      }
      // The old writer's choice between the tie: the greater commit text.
      await client.query(
        `UPDATE deployment_target SET current_assignment_id = (SELECT id FROM deployment_assignment WHERE gitops_commit_id = $1) WHERE id = $2`,
        [a > b ? a : b, target],
      );
      const host = (await client.query<{ id: string }>(`INSERT INTO host (name) VALUES ('h1') RETURNING id`)).rows[0]!.id;
      const reconciler = (
        await client.query<{ id: string }>(`INSERT INTO reconciler (host_id, name, type, manifests_endpoint_id) VALUES ($1, 'flux-system/api', 'flux', $2) RETURNING id`, [
          host,
          endpoint,
        ])
      ).rows[0]!.id;
      for (const [commit, minute] of [
        [a, 1],
        [b, 11],
        [c, 21],
        [d, 31],
      ] as const) {
        await client.query(
          `INSERT INTO deployment_state_history (reconciler_id, manifests_endpoint_id, gitops_commit_id, status, observed_at) VALUES ($1, $2, $3, 'success', $4)`,
          [reconciler, endpoint, commit, at(minute)],
        );
      }
      await client.query(
        `INSERT INTO deployment_state (reconciler_id, host_id, manifests_endpoint_id, gitops_commit_id, status, observed_at, last_observed_at) VALUES ($1, $2, $3, $4, 'success', $5, $5)`,
        [reconciler, host, endpoint, d, at(31)],
      );

      expect((await migrateToLatest(db.db)).applied[0]).toBe('0010_promotion_flow');

      const current = await client.query(`SELECT a.gitops_commit_id AS commit FROM deployment_target t JOIN deployment_assignment a ON a.id = t.current_assignment_id`);
      expect(current.rows).toEqual([{ commit: c }]);
      // Each commit's version, whether carried, and the first commit of its rollout.
      const versions = await client.query(
        `SELECT tc.gitops_commit_id AS commit, v.version, tc.carried, first.gitops_commit_id AS rollout_commit
           FROM target_commit tc JOIN deployment_assignment a ON a.id = tc.assignment_id
           JOIN workload_version v ON v.id = a.workload_version_id JOIN deployment_assignment first ON first.id = a.rollout_id
          ORDER BY tc.gitops_commit_id`,
      );
      expect(versions.rows).toEqual(
        [
          { commit: a, version: '1.0', carried: false, rollout_commit: a },
          { commit: b, version: '1.0', carried: false, rollout_commit: a },
          { commit: c, version: '2.0', carried: false, rollout_commit: c },
          { commit: d, version: '2.0', carried: true, rollout_commit: c },
        ].sort((x, y) => (x.commit < y.commit ? -1 : 1)),
      );
      const steps = await client.query(`SELECT from_commit, to_commit FROM commit_succession ORDER BY first_seen_at, from_commit`);
      expect(steps.rows).toEqual([
        { from_commit: a, to_commit: b },
        { from_commit: b, to_commit: c },
        { from_commit: c, to_commit: d },
      ]);
      const rollouts = await client.query(`SELECT gitops_commit_id AS commit, subscribers, succeeded, converged_at IS NOT NULL AS converged FROM rollout ORDER BY assigned_at`);
      expect(rollouts.rows).toEqual([
        { commit: a, subscribers: 1, succeeded: 1, converged: true },
        { commit: c, subscribers: 1, succeeded: 1, converged: true },
      ]);
      const state = await client.query(`SELECT deployed_versions, on_desired_version, status FROM kalypso_environment_state`);
      expect(state.rows).toEqual([{ deployed_versions: '2.0', on_desired_version: 1, status: 'success' }]);
    } finally {
      await client.end();
      await db.close();
    }
  });
});
