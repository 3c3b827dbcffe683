// Migration 0009 on a database written before it: environments that one write created together
// (same created_at, ids in name order) are put in the order of their earliest assignment, not
// left alphabetical; environments created later still follow them, and the unused rank column goes.
import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import { connectDatabase } from '../../src/store/connect.ts';
import { migrateToLatest, SCHEMA_DIR } from '../../src/store/migrate.ts';
import { environmentsReport } from '../../src/store/reports/environments-report.ts';
import { withDatabase } from '../support/global-database.ts';

describe('migration 0009 (environment order)', () => {
  let directory: string;
  let url: string;
  const name = `kalypso_envorder_migration_${process.pid}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
    await client.connect();
    await client.query(statement).finally(() => client.end());
  };

  beforeAll(async () => {
    directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-schema-'));
    for (const file of await readdir(SCHEMA_DIR)) if (file < '0009') await copyFile(path.join(SCHEMA_DIR, file), path.join(directory, file));
    await admin(`DROP DATABASE IF EXISTS ${name}`);
    await admin(`CREATE DATABASE ${name}`);
    url = withDatabase(inject('adminDatabaseUrl'), name);
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  it('orders environments created together by their earliest assignment, and later ones after them', async () => {
    // Random names, a, b, c, d in name order; `first` sorts before them all.
    const [a, b, c, d, late] = Array.from({ length: 5 }, () => `env-${randomUUID().slice(0, 8)}`).sort() as [string, string, string, string, string];
    const first = 'env-0';
    const db = connectDatabase({ url, poolSize: 2, connectTimeoutMs: 5_000, applicationName: 'test' }, createLogger('silent'));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      expect((await migrateToLatest(db.db, directory)).error).toBeUndefined();
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
