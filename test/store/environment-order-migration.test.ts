// Migration 0009 on a database written before it: environments that one write created together
// (same created_at, ids in name order) are put in the order of their earliest assignment, not
// left alphabetical; environments created later still follow them, and the unused rank column goes.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import { connectDatabase } from '../../src/store/connect.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { environmentsReport } from '../../src/store/reports/environments-report.ts';
import { type SchemaBefore, schemaBefore } from '../support/schema-before.ts';

describe('migration 0009 (environment order)', () => {
  let schema: SchemaBefore;

  beforeAll(async () => {
    schema = await schemaBefore('0009', `kalypso_envorder_migration_${process.pid}`);
  });

  afterAll(async () => {
    await schema.drop();
  });

  it('orders environments created together by their earliest assignment, and later ones after them', async () => {
    // Random names, a, b, c, d in name order; `first` sorts before them all.
    const [a, b, c, d, late] = Array.from({ length: 5 }, () => `env-${randomUUID().slice(0, 8)}`).sort() as [string, string, string, string, string];
    const first = 'env-0';
    const db = connectDatabase({ url: schema.url, poolSize: 2, connectTimeoutMs: 5_000, applicationName: 'test' }, createLogger('silent'));
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    try {
      expect((await migrateToLatest(db.db, schema.directory)).error).toBeUndefined();
      // As the writer of schema 0008 did: one statement, in name order, for a, b, c, d…
      await client.query(`INSERT INTO environment (name) SELECT unnest($1::text[]) ORDER BY 1`, [[a, b, c, d]]);
      // …and later writes for two more, one of them first by name.
      await client.query(`INSERT INTO environment (name) VALUES ($1)`, [first]);
      await client.query(`INSERT INTO environment (name) VALUES ($1)`, [late]);
      // Earliest assignments: c, then a, then b; d has none.
      await client.query(
        `WITH ws AS (INSERT INTO workspace (name) VALUES ('ws') RETURNING id),
              app AS (INSERT INTO application (workspace_id, name) SELECT id, 'app' FROM ws RETURNING id),
              w AS (INSERT INTO workload (application_id, name) SELECT id, 'w' FROM app RETURNING id),
              me AS (INSERT INTO manifests_endpoint (endpoint) SELECT 'https://example.com/gitops/' || x FROM unnest($1::text[]) x RETURNING id, endpoint),
              t AS (INSERT INTO deployment_target (workload_id, environment_id, name, manifests_endpoint_id)
                    SELECT w.id, e.id, 'main', me.id FROM w, environment e JOIN me ON me.endpoint = 'https://example.com/gitops/' || e.name
                    RETURNING id, environment_id),
              v AS (INSERT INTO workload_version (workload_id, version) SELECT id, '1.0.0' FROM w RETURNING id)
         INSERT INTO deployment_assignment (deployment_target_id, workload_version_id, gitops_commit_id, assigned_at)
         SELECT t.id, v.id, 'c-' || e.name, x.at
           FROM t JOIN environment e ON e.id = t.environment_id
           JOIN unnest($1::text[], $2::timestamptz[]) AS x(name, at) ON x.name = e.name
          CROSS JOIN v`,
        [
          [a, b, c],
          ['2026-11-20T10:00:00Z', '2026-11-20T11:00:00Z', '2026-11-20T09:00:00Z'],
        ],
      );

      // 0009 first, then whatever came after it.
      expect((await migrateToLatest(db.db)).applied[0]).toBe('0009_environment_order');
      const environments = await environmentsReport(db.db, { asOf: new Date(), staleAfterMs: 60_000 });
      expect(environments.map((environment) => environment.name)).toEqual([c, a, b, d, first, late]);
      expect(environments.every((environment) => environment.promotionRank === null)).toBe(true);
      const columns = await client.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns WHERE table_name = 'environment' ORDER BY ordinal_position`,
      );
      expect(columns.rows.map((row) => row.column_name)).toEqual(['id', 'name', 'created_at', 'first_seen_rank']);
    } finally {
      await client.end();
      await db.close();
    }
  });
});
