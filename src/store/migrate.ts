// Schema migrations: plain SQL files under schema/ (NNNN_name.sql), applied in order by Kysely's
// Migrator, each in its own transaction, with Kysely's lock so that several hub replicas
// starting at once migrate exactly once.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Kysely, sql } from 'kysely';
import { type Migration, type MigrationProvider, type MigrationResultSet, Migrator } from 'kysely/migration';

export const SCHEMA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../schema');

class SqlFileMigrationProvider implements MigrationProvider {
  readonly #directory: string;

  constructor(directory: string) {
    this.#directory = directory;
  }

  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(this.#directory)).filter((file) => /^\d{4}_[\w-]+\.sql$/.test(file)).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      const text = await readFile(path.join(this.#directory, file), 'utf8');
      migrations[file.replace(/\.sql$/, '')] = {
        // eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations predate the table types
        up: async (db: Kysely<any>) => {
          await sql.raw(text).execute(db);
        },
      };
    }
    return migrations;
  }
}

export interface MigrationReport {
  readonly applied: readonly string[];
  readonly error: Error | undefined;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before table types apply
export async function migrateToLatest(db: Kysely<any>, directory = SCHEMA_DIR): Promise<MigrationReport> {
  const migrator = new Migrator({ db, provider: new SqlFileMigrationProvider(directory) });
  const { results, error }: MigrationResultSet = await migrator.migrateToLatest();
  return {
    applied: (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName),
    error: error === undefined || error instanceof Error ? error : new Error(`migration failed: ${JSON.stringify(error)}`),
  };
}
