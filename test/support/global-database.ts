// One PostgreSQL server for the whole suite: the embedded one in a temporary directory (never
// ./.kalypso-hub), or the server named by TEST_DATABASE_URL. Migrations run once into a template
// database; every test file clones it (CREATE DATABASE … TEMPLATE), so files are isolated from
// each other and start from a migrated schema in milliseconds.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createLogger } from '../../src/log/logger.ts';
import { connectDatabase } from '../../src/store/connect.ts';
import { EmbeddedPostgres } from '../../src/store/embedded/embedded-postgres.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { freePort } from './ports.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Connection string of the server's maintenance database (`postgres`). */
    adminDatabaseUrl: string;
    templateDatabase: string;
  }
}

/** Server settings for tests: durability off, the data is thrown away anyway. */
export const FAST_TEST_SETTINGS = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' } as const;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = createLogger('warn');
  let server: EmbeddedPostgres | undefined;
  let directory: string | undefined;
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (adminUrl === undefined || adminUrl === '') {
    directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-test-pg-'));
    // The server may run as another user (root → postgres): let it reach the directory.
    await chmod(directory, 0o755);
    server = new EmbeddedPostgres(
      { dataDir: directory, port: await freePort(), password: 'test', database: 'postgres', settings: FAST_TEST_SETTINGS },
      log,
    );
    await server.start();
    adminUrl = server.url;
  }
  const template = `kalypso_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${template}`);
  await admin.query(`CREATE DATABASE ${template}`);
  await admin.end();

  const database = connectDatabase({ url: withDatabase(adminUrl, template), poolSize: 1, connectTimeoutMs: 5_000, applicationName: 'test-setup' }, log);
  const { error } = await migrateToLatest(database.db);
  await database.close();
  if (error !== undefined) throw error;

  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', template);
  return async () => {
    if (server !== undefined) await server.stop();
    else {
      const cleanup = new pg.Client({ connectionString: adminUrl });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS ${template}`);
      await cleanup.end();
    }
    if (directory !== undefined) await rm(directory, { recursive: true, force: true });
  };
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
