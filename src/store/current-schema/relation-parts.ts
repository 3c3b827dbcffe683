// What tables and views carry besides their own definition: indexes, triggers, constraints and
// comments on their columns. Each reader takes the relations at once and answers per relation.
// Parts a partition inherits from its parent (cloned indexes, constraints and triggers) are the
// parent's and left out: they are named by PostgreSQL, not by a migration.
import { type CatalogQuery, groupBy } from './catalog-query.ts';
import { commentLine } from './schema-file.ts';

type PerRelation = Map<number, string[]>;

/** Indexes that no constraint stands for, as pg_get_indexdef writes them, with their comments. */
export async function indexLines(query: CatalogQuery, oids: readonly number[]): Promise<PerRelation> {
  const rows = await query<{ oid: number; definition: string; ident: string; comment: string | null }>(
    `SELECT x.indrelid AS oid, pg_get_indexdef(x.indexrelid) AS definition,
            quote_ident(n.nspname) || '.' || quote_ident(i.relname) AS ident, obj_description(x.indexrelid, 'pg_class') AS comment
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
      WHERE x.indrelid = ANY($1::oid[])
        AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.contype IN ('p', 'u', 'x'))
        AND NOT EXISTS (SELECT FROM pg_inherits h WHERE h.inhrelid = x.indexrelid)
      ORDER BY x.indrelid, i.relname COLLATE "C"`,
    [oids],
  );
  return perRelation(rows, (row) => [`${row.definition};`, commentLine(`INDEX ${row.ident}`, row.comment)]);
}

const TRIGGER_ENABLED: Readonly<Record<string, string>> = { D: 'DISABLE TRIGGER', R: 'ENABLE REPLICA TRIGGER', A: 'ENABLE ALWAYS TRIGGER' };

/** Triggers a migration created (not foreign keys' internal ones), how they fire, and comments. */
export async function triggerLines(query: CatalogQuery, oids: readonly number[], table: (oid: number) => string): Promise<PerRelation> {
  const rows = await query<{ oid: number; definition: string; ident: string; enabled: string; comment: string | null }>(
    `SELECT t.tgrelid AS oid, pg_get_triggerdef(t.oid) AS definition, quote_ident(t.tgname) AS ident, t.tgenabled AS enabled,
            obj_description(t.oid, 'pg_trigger') AS comment
       FROM pg_trigger t
      WHERE t.tgrelid = ANY($1::oid[]) AND NOT t.tgisinternal AND t.tgparentid = 0
      ORDER BY t.tgrelid, t.tgname COLLATE "C"`,
    [oids],
  );
  return perRelation(rows, (row) => [
    `${row.definition};`,
    TRIGGER_ENABLED[row.enabled] === undefined ? undefined : `ALTER TABLE ${table(row.oid)} ${TRIGGER_ENABLED[row.enabled]} ${row.ident};`,
    commentLine(`TRIGGER ${row.ident} ON ${table(row.oid)}`, row.comment),
  ]);
}

/** Table constraints as they go inside CREATE TABLE, primary key first; with their comments apart. */
export async function constraintLines(
  query: CatalogQuery,
  oids: readonly number[],
  table: (oid: number) => string,
): Promise<{ readonly inline: PerRelation; readonly comments: PerRelation }> {
  // NOT NULL is the column's (PostgreSQL 18 also lists it here); constraint triggers are triggers.
  const rows = await query<{ oid: number; ident: string; definition: string; comment: string | null }>(
    `SELECT conrelid AS oid, quote_ident(conname) AS ident, pg_get_constraintdef(oid) AS definition,
            obj_description(oid, 'pg_constraint') AS comment
       FROM pg_constraint
      WHERE conrelid = ANY($1::oid[]) AND conislocal AND contype NOT IN ('n', 't')
      ORDER BY conrelid, position(contype::text IN 'puxcf'), conname COLLATE "C"`,
    [oids],
  );
  return {
    inline: perRelation(rows, (row) => [`CONSTRAINT ${row.ident} ${row.definition}`]),
    comments: perRelation(rows, (row) => [commentLine(`CONSTRAINT ${row.ident} ON ${table(row.oid)}`, row.comment)]),
  };
}

/** COMMENT ON COLUMN lines, in column order. */
export async function columnCommentLines(query: CatalogQuery, oids: readonly number[], relation: (oid: number) => string): Promise<PerRelation> {
  const rows = await query<{ oid: number; ident: string; comment: string }>(
    `SELECT attrelid AS oid, quote_ident(attname) AS ident, col_description(attrelid, attnum) AS comment
       FROM pg_attribute
      WHERE attrelid = ANY($1::oid[]) AND attnum > 0 AND NOT attisdropped AND col_description(attrelid, attnum) IS NOT NULL
      ORDER BY attrelid, attnum`,
    [oids],
  );
  return perRelation(rows, (row) => [commentLine(`COLUMN ${relation(row.oid)}.${row.ident}`, row.comment)]);
}

function perRelation<T extends { readonly oid: number }>(rows: readonly T[], render: (row: T) => readonly (string | undefined)[]): PerRelation {
  const lines: PerRelation = new Map();
  for (const [oid, group] of groupBy(rows, (row) => row.oid)) {
    lines.set(
      oid,
      group.flatMap((row) => render(row).filter((line): line is string => line !== undefined)),
    );
  }
  return lines;
}
