// A migration test's database: empty, with the schema directory as it was before one migration, so
// that a test can write data the way an older hub did and then migrate to the latest.
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { SCHEMA_DIR } from '../../src/store/migrate.ts';
import { withDatabase } from './global-database.ts';

export interface SchemaBefore {
  /** The new database's connection string. */
  readonly url: string;
  /** The migrations before `migration` (for migrateToLatest's directory). */
  readonly directory: string;
  drop(): Promise<void>;
}

/** A database named `name` and the migrations that come before `migration` (e.g. `0010`). */
export async function schemaBefore(migration: string, name: string): Promise<SchemaBefore> {
  const admin = async (statement: string): Promise<void> => {
    const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
    await client.connect();
    await client.query(statement).finally(() => client.end());
  };
  const directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-schema-'));
  for (const file of await readdir(SCHEMA_DIR)) if (file < migration) await copyFile(path.join(SCHEMA_DIR, file), path.join(directory, file));
  await admin(`DROP DATABASE IF EXISTS ${name}`);
  await admin(`CREATE DATABASE ${name}`);
  return {
    url: withDatabase(inject('adminDatabaseUrl'), name),
    directory,
    async drop() {
      await rm(directory, { recursive: true, force: true });
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
