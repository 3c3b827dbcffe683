// types/<name>.sql: the enums (the only kind of type the migrations make; others are refused by
// unrendered-objects.ts until they are rendered here). Labels in their sort order.
import { type Catalog, notExtensionMember } from './catalog-query.ts';
import { historyLines, type MigrationHistory } from './migration-history.ts';
import { privilegeLines } from './privilege-lines.ts';
import { commentLine, type SchemaFile, sqlText } from './schema-file.ts';

interface EnumRow {
  readonly oid: number;
  readonly name: string;
  readonly ident: string;
  readonly labels: readonly string[];
  readonly comment: string | null;
}

export async function typeFiles({ query, schema, schemaIdent }: Catalog, history: MigrationHistory): Promise<SchemaFile[]> {
  const enums = await query<EnumRow>(
    `SELECT t.oid, t.typname AS name, quote_ident(t.typname) AS ident,
            array_agg(quote_literal(e.enumlabel) ORDER BY e.enumsortorder) AS labels, obj_description(t.oid, 'pg_type') AS comment
       FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
      WHERE t.typnamespace = $1::regnamespace AND ${notExtensionMember('pg_type', 't.oid')}
      GROUP BY t.oid
      ORDER BY t.typname COLLATE "C"`,
    [schema],
  );
  const grants = await privilegeLines(
    query,
    'pg_type',
    enums.map((type) => type.oid),
    (oid) => `TYPE ${schemaIdent}.${enums.find((type) => type.oid === oid)!.ident}`,
  );
  return enums.map((type) => ({
    kind: 'types',
    name: type.name,
    origin: history.createdIn('type', type.name),
    comment: type.comment ?? undefined,
    text: sqlText(historyLines(history, 'type', type.name), [
      `CREATE TYPE ${schemaIdent}.${type.ident} AS ENUM (\n${type.labels.map((label) => `  ${label}`).join(',\n')}\n);`,
      commentLine(`TYPE ${schemaIdent}.${type.ident}`, type.comment),
      grants.get(type.oid)?.join('\n'),
    ]),
  }));
}
