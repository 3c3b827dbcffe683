// History is partitioned by month (schema/0006): rows land in their month, months without a
// partition fall into the default one and move when the month gets its partition, duplicates are
// still refused across partitions, retention drops whole months, and the migration from the
// unpartitioned table keeps every row.
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import { connectDatabase, type Database } from '../../src/store/connect.ts';
import { maintainHistoryPartitions } from '../../src/store/history-partitions.ts';
import { migrateToLatest, SCHEMA_DIR } from '../../src/store/migrate.ts';
import { RecordWriter } from '../../src/store/record-writer.ts';
import { withDatabase } from '../support/global-database.ts';
import { ENDPOINT, stateRecord } from '../support/records.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

const NOW = new Date(Date.UTC(2026, 10, 21));
const at = (year: number, month: number, day = 10) => new Date(Date.UTC(year, month - 1, day, 12));
let testDb: TestDatabase;
let database: Database;
let writer: RecordWriter;

beforeAll(async () => ({ testDb, database } = await openTestDatabase(4)));

afterAll(() => closeTestDatabase({ testDb, database }));

beforeEach(async () => {
  await testDb.query(`TRUNCATE host, reconciler, manifests_endpoint, deployment_state, deployment_state_history RESTART IDENTITY CASCADE`);
  writer = new RecordWriter(database.db, createLogger('silent'), { retryAfterSeconds: 1, now: () => NOW });
});

/** Where each history row is stored: partition name by commit. */
const placement = async () =>
  Object.fromEntries(
    (
      await testDb.query<{ commit: string; partition: string }>(
        `SELECT gitops_commit_id AS commit, tableoid::regclass::text AS partition FROM deployment_state_history ORDER BY observed_at`,
      )
    ).map((row) => [row.commit, row.partition]),
  );
const partitions = async () =>
  (
    await testDb.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'deployment_state_history'::regclass ORDER BY 1`,
    )
  ).map((row) => row.name);

describe('history partitions', () => {
  it('creates this month and the next two, and stores each report in its month', async () => {
    await maintainHistoryPartitions(database.db, { retentionMs: 0, now: NOW });
    expect(await partitions()).toEqual(
      expect.arrayContaining([
        'deployment_state_history_default',
        'deployment_state_history_y2026m11',
        'deployment_state_history_y2026m12',
        'deployment_state_history_y2027m01',
      ]),
    );
    await writer.write([
      stateRecord({ commit: 'c-nov', at: at(2026, 11, 20) }),
      stateRecord({ commit: 'c-dec', at: at(2026, 12, 1) }),
      stateRecord({ commit: 'c-1999', at: at(1999, 1) }),
    ]);
    expect(await placement()).toEqual({
      'c-1999': 'deployment_state_history_default',
      'c-nov': 'deployment_state_history_y2026m11',
      'c-dec': 'deployment_state_history_y2026m12',
    });
  });

  it('moves default-partition rows into a month when it gets its partition, losing none', async () => {
    await writer.write([stateRecord({ commit: 'c-a', at: at(2031, 3, 2) }), stateRecord({ commit: 'c-b', at: at(2031, 4, 2) })]);
    expect(await placement()).toEqual({ 'c-a': 'deployment_state_history_default', 'c-b': 'deployment_state_history_default' });

    const result = await maintainHistoryPartitions(database.db, { retentionMs: 0, now: at(2031, 3, 15) });
    expect(result.partitionsCreated).toBe(3); // March, April, May 2031
    expect(await placement()).toEqual({ 'c-a': 'deployment_state_history_y2031m03', 'c-b': 'deployment_state_history_y2031m04' });
    // Running again changes nothing.
    expect((await maintainHistoryPartitions(database.db, { retentionMs: 0, now: at(2031, 3, 15) })).partitionsCreated).toBe(0);
  });

  it('still stores a report delivered twice once', async () => {
    await maintainHistoryPartitions(database.db, { retentionMs: 0, now: NOW });
    const report = stateRecord({ commit: 'c-dup', status: 'failure', at: at(2026, 11, 20) });
    await writer.write([report]);
    await writer.write([stateRecord({ commit: 'c-next', at: at(2026, 11, 21) })]);
    await writer.write([report]); // a late duplicate, after a newer report
    expect(await testDb.query(`SELECT gitops_commit_id FROM deployment_state_history ORDER BY observed_at`)).toEqual([
      { gitops_commit_id: 'c-dup' },
      { gitops_commit_id: 'c-next' },
    ]);
  });

  it('retention drops whole months that ended before the cutoff and keeps current states', async () => {
    await maintainHistoryPartitions(database.db, { retentionMs: 0, now: at(2026, 7, 1) }); // July–September
    await maintainHistoryPartitions(database.db, { retentionMs: 0, now: NOW }); // November–January
    await writer.write([
      stateRecord({ commit: 'c-1999', at: at(1999, 1) }),
      stateRecord({ commit: 'c-jul', at: at(2026, 7, 5) }),
      stateRecord({ commit: 'c-aug', at: at(2026, 8, 25) }),
      stateRecord({ commit: 'c-nov', at: at(2026, 11, 20) }),
      stateRecord({ reconciler: 'old-one', commit: 'c-old-current', at: at(2026, 7, 6) }),
    ]);
    // 100 days before 21 November is 13 August: July ended before it, August did not.
    const result = await maintainHistoryPartitions(database.db, { retentionMs: 100 * 86_400_000, now: NOW });
    expect(result.partitionsDropped).toBeGreaterThanOrEqual(1);
    const left = await partitions();
    expect(left).not.toContain('deployment_state_history_y2026m07');
    expect(left).toContain('deployment_state_history_y2026m08');
    expect(Object.keys(await placement()).sort()).toEqual(['c-aug', 'c-nov']);
    // The current state table is not history: the reconciler silent since July still shows.
    const current = await testDb.query(`SELECT gitops_commit_id FROM deployment_state ORDER BY gitops_commit_id`);
    expect(current).toEqual([{ gitops_commit_id: 'c-nov' }, { gitops_commit_id: 'c-old-current' }]);
  });
});

describe('migration to partitioned history', () => {
  let directory: string;
  let url: string;
  let name: string;
  const adminUrl = () => inject('adminDatabaseUrl');
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl() });
    await client.connect();
    await client.query(statement).finally(() => client.end());
  };

  beforeAll(async () => {
    directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-schema-'));
    for (const file of await readdir(SCHEMA_DIR)) if (file < '0006') await copyFile(path.join(SCHEMA_DIR, file), path.join(directory, file));
    name = `kalypso_partition_migration_${process.pid}`;
    await admin(`DROP DATABASE IF EXISTS ${name}`);
    await admin(`CREATE DATABASE ${name}`);
    url = withDatabase(adminUrl(), name);
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  it('keeps every row and id of the unpartitioned table, and new rows follow them', async () => {
    const db = connectDatabase({ url, poolSize: 2, connectTimeoutMs: 5_000, applicationName: 'test' }, createLogger('silent'));
    try {
      expect((await migrateToLatest(db.db, directory)).error).toBeUndefined();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        // History as a hub of schema 0005 wrote it (today's writer needs the later migrations).
        await client.query(
          `WITH e AS (INSERT INTO manifests_endpoint (endpoint) VALUES ($1) RETURNING id),
                h AS (INSERT INTO host (name) VALUES ('aks-dev-eus') RETURNING id),
                r AS (INSERT INTO reconciler (host_id, name, type, manifests_endpoint_id) SELECT h.id, 'hello-world', 'flux', e.id FROM h, e RETURNING id, manifests_endpoint_id)
           INSERT INTO deployment_state_history (reconciler_id, manifests_endpoint_id, gitops_commit_id, status, observed_at)
           SELECT r.id, r.manifests_endpoint_id, x.commit, 'success', x.at
             FROM r, unnest($2::text[], $3::timestamptz[]) AS x(commit, at)`,
          [ENDPOINT, ['c-2019', 'c-oct', 'c-nov'], [at(2019, 5), at(2026, 10, 3), at(2026, 11, 20)]],
        );
        const rowsBefore = (await client.query('SELECT * FROM deployment_state_history ORDER BY id')).rows;
        expect(rowsBefore).toHaveLength(3);

        const migrated = await migrateToLatest(db.db);
        expect(migrated.error).toBeUndefined();
        expect(migrated.applied).toContain('0006_history_partitions');
        expect((await client.query('SELECT * FROM deployment_state_history ORDER BY id')).rows).toEqual(rowsBefore);
        const placed = (await client.query<{ commit: string; partition: string }>(
          `SELECT gitops_commit_id AS commit, tableoid::regclass::text AS partition FROM deployment_state_history ORDER BY id`,
        )).rows;
        expect(placed.map((row) => row.partition)).toEqual([
          'deployment_state_history_default', // older than two years before the migration ran
          'deployment_state_history_y2026m10',
          'deployment_state_history_y2026m11',
        ]);

        const after = new RecordWriter(db.db, createLogger('silent'), { retryAfterSeconds: 1, now: () => NOW });
        await after.write([stateRecord({ commit: 'c-new', at: at(2026, 11, 21) })]);
        const newest = (await client.query<{ id: string }>(`SELECT id FROM deployment_state_history WHERE gitops_commit_id = 'c-new'`)).rows[0]!;
        expect(Number(newest.id)).toBeGreaterThan(Math.max(...rowsBefore.map((row) => Number(row.id))));
        // The view over history was recreated on the new table.
        expect((await client.query(`SELECT commit_id FROM kalypso_environment_history ORDER BY observed_at DESC LIMIT 1`)).rows).toEqual([
          { commit_id: 'c-new' },
        ]);
      } finally {
        await client.end();
      }
    } finally {
      await db.close();
    }
  });
});
