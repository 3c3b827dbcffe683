// tables/<name>.sql: CREATE TABLE with its columns, constraints, partitioning and storage options,
// then its indexes, triggers, comments and grants. Kysely's bookkeeping tables are the migrator's,
// and the monthly history partitions are made at run time (src/store/history-partitions.ts), so
// neither is listed; the DEFAULT partition is made by schema/0006 and is.
import { type Catalog, notExtensionMember } from './catalog-query.ts';
import { historyLines, type MigrationHistory } from './migration-history.ts';
import { privilegeLines } from './privilege-lines.ts';
import { columnCommentLines, constraintLines, indexLines, triggerLines } from './relation-parts.ts';
import { commentLine, type SchemaFile, sqlText } from './schema-file.ts';
import { columnLines } from './table-columns.ts';

const MIGRATOR_TABLES = ['kysely_migration', 'kysely_migration_lock'];

/** The table whose monthly partitions the hub makes as months come: kalypso_ensure_history_partitions (schema/0006) names them. */
const RUNTIME_PARTITIONED = { table: 'deployment_state_history', partition: /^deployment_state_history_y\d{4}m\d{2}$/ } as const;

export function isRuntimePartition(parent: string | null, name: string): boolean {
  return parent === RUNTIME_PARTITIONED.table && RUNTIME_PARTITIONED.partition.test(name);
}

interface TableRow {
  readonly oid: number;
  readonly name: string;
  readonly ident: string;
  readonly unlogged: boolean;
  readonly options: string | null;
  readonly partition_key: string | null;
  readonly parent: string | null;
  readonly parent_ident: string | null;
  readonly bound: string | null;
  readonly comment: string | null;
}

async function tableRows({ query, schema }: Catalog): Promise<TableRow[]> {
  const rows = await query<TableRow>(
    `SELECT c.oid, c.relname AS name, quote_ident(c.relname) AS ident, c.relpersistence = 'u' AS unlogged,
            array_to_string(c.reloptions, ', ') AS options,
            CASE WHEN c.relkind = 'p' THEN pg_get_partkeydef(c.oid) END AS partition_key,
            p.relname AS parent, quote_ident(p.relname) AS parent_ident,
            CASE WHEN c.relispartition THEN pg_get_expr(c.relpartbound, c.oid) END AS bound,
            obj_description(c.oid, 'pg_class') AS comment
       FROM pg_class c
       LEFT JOIN pg_inherits h ON h.inhrelid = c.oid AND c.relispartition
       LEFT JOIN pg_class p ON p.oid = h.inhparent
      WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('r', 'p') AND c.relname <> ALL ($2::text[])
        AND ${notExtensionMember('pg_class', 'c.oid')}
      ORDER BY c.relname COLLATE "C"`,
    [schema, MIGRATOR_TABLES],
  );
  return rows.filter((row) => !isRuntimePartition(row.parent, row.name));
}

export async function tableFiles(catalog: Catalog, history: MigrationHistory): Promise<SchemaFile[]> {
  const { query, schemaIdent } = catalog;
  const tables = await tableRows(catalog);
  const oids = tables.map((table) => table.oid);
  const qualified = new Map(tables.map((table) => [table.oid, `${schemaIdent}.${table.ident}`]));
  const name = (oid: number) => qualified.get(oid)!;
  const [columns, constraints, indexes, triggers, columnComments, grants] = await Promise.all([
    columnLines(query, oids),
    constraintLines(query, oids, name),
    indexLines(query, oids),
    triggerLines(query, oids, name),
    columnCommentLines(query, oids, name),
    privilegeLines(query, 'pg_class', oids, (oid) => `TABLE ${name(oid)}`),
  ]);
  return tables.map((table) => ({
    kind: 'tables',
    name: table.name,
    origin: history.createdIn('table', table.name),
    comment: table.comment ?? undefined,
    text: sqlText(historyLines(history, 'table', table.name), [
      createTable(table, name(table.oid), schemaIdent, [...(columns.get(table.oid) ?? []), ...(constraints.inline.get(table.oid) ?? [])]),
      indexes.get(table.oid)?.join('\n'),
      triggers.get(table.oid)?.join('\n'),
      [commentLine(`TABLE ${name(table.oid)}`, table.comment), ...(columnComments.get(table.oid) ?? []), ...(constraints.comments.get(table.oid) ?? [])]
        .filter((line) => line !== undefined)
        .join('\n'),
      grants.get(table.oid)?.join('\n'),
    ]),
  }));
}

function createTable(table: TableRow, qualified: string, schemaIdent: string, elements: readonly string[]): string {
  const body = elements.length === 0 ? '' : ` (\n${elements.map((element) => `  ${element}`).join(',\n')}\n)`;
  const partitionOf = table.parent_ident === null ? '' : ` PARTITION OF ${schemaIdent}.${table.parent_ident}`;
  const tail = [
    table.bound === null ? undefined : table.bound,
    table.partition_key === null ? undefined : `PARTITION BY ${table.partition_key}`,
    table.options === null ? undefined : `WITH (${table.options})`,
  ].filter((part) => part !== undefined);
  const note = table.partition_key === null ? '' : partitionNote(table.name);
  return `${note}CREATE ${table.unlogged ? 'UNLOGGED ' : ''}TABLE ${qualified}${partitionOf}${body}${tail.map((part) => ` ${part}`).join('')};`;
}

function partitionNote(name: string): string {
  return name === RUNTIME_PARTITIONED.table
    ? `-- Its monthly partitions (${name}_yYYYYmMM) are made at run time by src/store/history-partitions.ts and not listed here.\n`
    : '';
}
