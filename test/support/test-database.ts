// A fresh, migrated database per test file (cloned from the suite's template).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
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
