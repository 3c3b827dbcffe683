// The column lines of CREATE TABLE: type, collation when not the type's own, identity (with its
// sequence's name and options only where they differ from what PostgreSQL would choose), generated
// expression or default, NOT NULL. Columns a partition inherits are its parent's and left out.
import { type CatalogQuery, groupBy } from './catalog-query.ts';

interface ColumnRow {
  readonly oid: number;
  readonly table: string;
  readonly name: string;
  readonly ident: string;
  readonly type: string;
  readonly not_null: boolean;
  readonly expression: string | null;
  readonly identity: '' | 'a' | 'd';
  readonly generated: '' | 's' | 'v';
  readonly collation: string | null;
  readonly sequence: SequenceRow | null;
}

interface SequenceRow {
  readonly name: string;
  readonly ident: string;
  readonly start: string;
  readonly increment: string;
  readonly min: string;
  readonly max: string;
  readonly cache: string;
  readonly cycle: boolean;
  readonly type_max: string;
}

export async function columnLines(query: CatalogQuery, oids: readonly number[]): Promise<Map<number, string[]>> {
  const rows = await query<ColumnRow>(
    `SELECT a.attrelid AS oid, c.relname AS table, a.attname AS name, quote_ident(a.attname) AS ident,
            format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null, pg_get_expr(d.adbin, d.adrelid) AS expression,
            a.attidentity AS identity, a.attgenerated AS generated,
            CASE WHEN a.attcollation <> t.typcollation THEN quote_ident(co.collname) END AS collation,
            (SELECT json_build_object('name', s.relname, 'ident', quote_ident(s.relname), 'start', q.seqstart::text,
                                      'increment', q.seqincrement::text, 'min', q.seqmin::text, 'max', q.seqmax::text,
                                      'cache', q.seqcache::text, 'cycle', q.seqcycle,
                                      'type_max', CASE q.seqtypid WHEN 'int2'::regtype THEN '32767' WHEN 'int4'::regtype THEN '2147483647'
                                                  ELSE '9223372036854775807' END)
               FROM pg_depend dep JOIN pg_class s ON s.oid = dep.objid JOIN pg_sequence q ON q.seqrelid = s.oid
              WHERE dep.classid = 'pg_class'::regclass AND dep.refobjid = a.attrelid AND dep.refobjsubid = a.attnum
                AND dep.deptype = 'i') AS sequence
       FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid
       JOIN pg_type t ON t.oid = a.atttypid
       LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
       LEFT JOIN pg_collation co ON co.oid = a.attcollation
      WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped AND a.attislocal
      ORDER BY a.attrelid, a.attnum`,
    [oids],
  );
  const lines = new Map<number, string[]>();
  for (const [oid, columns] of groupBy(rows, (row) => row.oid)) {
    const width = Math.max(...columns.map((column) => column.ident.length));
    lines.set(oid, columns.map((column) => `${column.ident.padEnd(width)} ${columnDefinition(column)}`));
  }
  return lines;
}

function columnDefinition(column: ColumnRow): string {
  const parts = [column.type];
  if (column.collation !== null) parts.push(`COLLATE ${column.collation}`);
  if (column.identity !== '') parts.push(`GENERATED ${column.identity === 'a' ? 'ALWAYS' : 'BY DEFAULT'} AS IDENTITY${identityOptions(column)}`);
  if (column.generated !== '') parts.push(`GENERATED ALWAYS AS (${column.expression}) ${column.generated === 's' ? 'STORED' : 'VIRTUAL'}`);
  else if (column.expression !== null) parts.push(`DEFAULT ${column.expression}`);
  if (column.not_null) parts.push('NOT NULL');
  return parts.join(' ');
}

/** Only what differs from `GENERATED … AS IDENTITY` with no options on this column. */
function identityOptions({ table, name, sequence }: ColumnRow): string {
  if (sequence === null) return '';
  const options: string[] = [];
  // The sequence's name is kept: an earlier table's sequence may have taken the usual one (schema/0006).
  if (sequence.name !== `${table}_${name}_seq`) options.push(`SEQUENCE NAME ${sequence.ident}`);
  if (sequence.increment !== '1') options.push(`INCREMENT BY ${sequence.increment}`);
  if (sequence.min !== '1') options.push(`MINVALUE ${sequence.min}`);
  if (sequence.max !== sequence.type_max) options.push(`MAXVALUE ${sequence.max}`);
  if (sequence.start !== sequence.min) options.push(`START WITH ${sequence.start}`);
  if (sequence.cache !== '1') options.push(`CACHE ${sequence.cache}`);
  if (sequence.cycle) options.push('CYCLE');
  return options.length === 0 ? '' : ` (${options.join(' ')})`;
}
