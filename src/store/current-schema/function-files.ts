// functions/<name>.sql: every overload of one name, ordered by argument types, as
// pg_get_functiondef gives it (the body verbatim as the last migration wrote it), with its comment
// and grants. Trigger functions are functions like the others.
import { type Catalog, groupBy, notExtensionMember } from './catalog-query.ts';
import { historyLines, type MigrationHistory } from './migration-history.ts';
import { privilegeLines } from './privilege-lines.ts';
import { commentLine, type SchemaFile, sqlText } from './schema-file.ts';

interface FunctionRow {
  readonly oid: number;
  readonly name: string;
  readonly ident: string;
  readonly procedure: boolean;
  readonly arg_types: string;
  readonly definition: string;
  readonly comment: string | null;
}

export async function functionFiles({ query, schema, schemaIdent }: Catalog, history: MigrationHistory): Promise<SchemaFile[]> {
  const rows = await query<FunctionRow>(
    `SELECT p.oid, p.proname AS name, quote_ident(p.proname) AS ident, p.prokind = 'p' AS procedure,
            oidvectortypes(p.proargtypes) AS arg_types, pg_get_functiondef(p.oid) AS definition,
            obj_description(p.oid, 'pg_proc') AS comment
       FROM pg_proc p
      WHERE p.pronamespace = $1::regnamespace AND p.prokind IN ('f', 'p', 'w') AND ${notExtensionMember('pg_proc', 'p.oid')}
      ORDER BY p.proname COLLATE "C", oidvectortypes(p.proargtypes) COLLATE "C"`,
    [schema],
  );
  const signature = new Map(rows.map((row) => [row.oid, `${row.procedure ? 'PROCEDURE' : 'FUNCTION'} ${schemaIdent}.${row.ident}(${row.arg_types})`]));
  const grants = await privilegeLines(query, 'pg_proc', [...signature.keys()], (oid) => signature.get(oid)!);
  return [...groupBy(rows, (row) => row.name)].map(([name, overloads]) => ({
    kind: 'functions',
    name,
    origin: history.createdIn('function', name),
    comment: overloads.find((row) => row.comment !== null)?.comment ?? undefined,
    text: sqlText(
      historyLines(history, 'function', name),
      overloads.flatMap((row) => [
        `${row.definition.trimEnd()};`,
        commentLine(signature.get(row.oid)!, row.comment),
        grants.get(row.oid)?.join('\n'),
      ]),
    ),
  }));
}
