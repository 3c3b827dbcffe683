// The generator reads the catalogs in one read-only snapshot. PostgreSQL's deparsers
// (pg_get_viewdef, format_type, pg_get_constraintdef, …) qualify a name exactly when it is not on
// the search_path, so the path is pinned to the schema the migrations built: the text must not
// depend on the settings of whoever runs the generator.
import { CompiledQuery, type Kysely } from 'kysely';
import type { HubDatabase } from '../database-schema.ts';

export type CatalogQuery = <R>(text: string, values?: readonly unknown[]) => Promise<R[]>;

export interface Catalog {
  readonly query: CatalogQuery;
  /** The schema the migrations built, by name (every query filters on it). */
  readonly schema: string;
  /** The same, quoted as an identifier, to qualify object names as pg_get_functiondef does. */
  readonly schemaIdent: string;
  /** The server's major version: views' text is its deparser's. */
  readonly serverMajor: number;
}

export async function readCatalog<T>(db: Kysely<HubDatabase>, work: (catalog: Catalog) => Promise<T>): Promise<T> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const query: CatalogQuery = async <R>(text: string, values: readonly unknown[] = []) =>
        (await trx.executeQuery(CompiledQuery.raw(text, [...values]))).rows as R[];
      const [found] = await query<{ schema: string | null; schema_ident: string; server_major: number }>(
        `SELECT current_schema() AS schema, quote_ident(current_schema()) AS schema_ident,
                current_setting('server_version_num')::int / 10000 AS server_major`,
      );
      if (found === undefined || found.schema === null) throw new Error('no schema on the search_path: nothing to read the current schema from');
      await query(`SELECT set_config('search_path', $1, true)`, [found.schema_ident]);
      return work({ query, schema: found.schema, schemaIdent: found.schema_ident, serverMajor: found.server_major });
    });
}


/** Rows grouped by a key, each group in the order the query returned it. */
export function groupBy<T, K>(rows: readonly T[], key: (row: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const row of rows) {
    const k = key(row);
    const group = groups.get(k);
    if (group === undefined) groups.set(k, [row]);
    else group.push(row);
  }
  return groups;
}

/** Objects that belong to an extension are the extension's, not the migrations'. */
export function notExtensionMember(catalog: 'pg_class' | 'pg_proc' | 'pg_type', oid: string): string {
  return `NOT EXISTS (SELECT FROM pg_depend e WHERE e.classid = '${catalog}'::regclass AND e.objid = ${oid} AND e.deptype = 'e')`;
}
