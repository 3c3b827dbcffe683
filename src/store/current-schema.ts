// The schema as it is today, one readable file per object, generated from a migrated database
// (schema/current/, `npm run schema:current`). The numbered migrations stay the only thing that
// changes a database; these files are derived from their result and checked against it by
// test/store/current-schema.test.ts, never applied. See schema/current/README.md for why.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { readCatalog } from './current-schema/catalog-query.ts';
import { functionFiles } from './current-schema/function-files.ts';
import { readMigrationHistory } from './current-schema/migration-history.ts';
import { readmeText } from './current-schema/readme-file.ts';
import { roleFiles } from './current-schema/role-files.ts';
import { schemaFilePath } from './current-schema/schema-file.ts';
import { tableFiles } from './current-schema/table-files.ts';
import { typeFiles } from './current-schema/type-files.ts';
import { refuseUnrendered } from './current-schema/unrendered-objects.ts';
import { viewFiles } from './current-schema/view-files.ts';
import type { HubDatabase } from './database-schema.ts';
import { SCHEMA_DIR } from './migrate.ts';

export const CURRENT_SCHEMA_DIR = path.join(SCHEMA_DIR, 'current');
export const README = 'README.md';

/** Every file of schema/current/ (path relative to it → text), sorted by path. */
export async function currentSchemaFiles(db: Kysely<HubDatabase>, migrations = SCHEMA_DIR): Promise<Map<string, string>> {
  const history = await readMigrationHistory(migrations);
  return readCatalog(db, async (catalog) => {
    await refuseUnrendered(catalog);
    // The readers' queries queue on the snapshot's one connection.
    const objects = (
      await Promise.all([tableFiles, viewFiles, functionFiles, typeFiles, roleFiles].map((files) => files(catalog, history)))
    ).flat();
    const files = new Map<string, string>(objects.map((file) => [schemaFilePath(file), file.text]));
    files.set(README, readmeText(objects, catalog.serverMajor));
    return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}

/** The files committed under `directory` (README.md and the .sql files of each kind's folder). */
export async function committedSchemaFiles(directory = CURRENT_SCHEMA_DIR): Promise<Map<string, string>> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  const files = new Map<string, string>();
  for (const entry of entries.filter((found) => found.isFile())) {
    const absolute = path.join(entry.parentPath, entry.name);
    files.set(path.relative(directory, absolute).split(path.sep).join('/'), await readFile(absolute, 'utf8'));
  }
  return files;
}

export interface SchemaDifferences {
  /** In both, with different text. */
  readonly stale: readonly string[];
  /** Generated, not committed. */
  readonly missing: readonly string[];
  /** Committed, no longer generated. */
  readonly extra: readonly string[];
}

export function schemaDifferences(generated: ReadonlyMap<string, string>, committed: ReadonlyMap<string, string>): SchemaDifferences {
  const names = [...new Set([...generated.keys(), ...committed.keys()])].sort();
  return {
    stale: names.filter((name) => generated.has(name) && committed.has(name) && generated.get(name) !== committed.get(name)),
    missing: names.filter((name) => !committed.has(name)),
    extra: names.filter((name) => !generated.has(name)),
  };
}
