// A fresh, migrated database per test file (cloned from the suite's template).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import { connectDatabase, type Database } from '../../src/store/connect.ts';
import { withDatabase } from './global-database.ts';

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  /** Runs SQL against the test database (a short-lived connection). */
  query<R extends pg.QueryResultRow = Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>;
  /** Runs `work` in a transaction of its own connection and rolls it back: a recount that leaves no trace. */
  rolledBack<T>(work: (client: pg.Client) => Promise<T>): Promise<T>;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('adminDatabaseUrl');
  const name = `kalypso_test_${randomBytes(6).toString('hex')}`;
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`));
  const url = withDatabase(adminUrl, name);
  return {
    url,
    name,
    query: async <R extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
      withClient(url, async (client) => (await client.query<R>(text, values)).rows),
    rolledBack: (work) =>
      withClient(url, async (client) => {
        await client.query('BEGIN');
        try {
          return await work(client);
        } finally {
          await client.query('ROLLBACK');
        }
      }),
    drop: () =>
      withClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A test database with the hub's connection pool on it, for tests that write through the store. */
export interface PooledTestDatabase {
  readonly testDb: TestDatabase;
  readonly database: Database;
}

/** `beforeAll(async () => ({ testDb, database } = await openTestDatabase(poolSize)))` */
export async function openTestDatabase(poolSize: number): Promise<PooledTestDatabase> {
  const testDb = await createTestDatabase();
  const database = connectDatabase({ url: testDb.url, poolSize, connectTimeoutMs: 5_000, applicationName: 'test' }, createLogger('silent'));
  return { testDb, database };
}

/** The pool closed, then the database dropped; either may be missing when opening failed. */
export async function closeTestDatabase(opened: { readonly testDb?: TestDatabase; readonly database?: Database }): Promise<void> {
  await opened.database?.close();
  await opened.testDb?.drop();
}
