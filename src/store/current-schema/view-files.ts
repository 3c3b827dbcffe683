// views/<name>.sql: the view as PostgreSQL reads it back (pg_get_viewdef, pretty): column lists
// spelled out, names resolved — the rule as it is applied, not as it was typed. Materialized views
// come with their indexes.
import { type Catalog, notExtensionMember } from './catalog-query.ts';
import { historyLines, type MigrationHistory } from './migration-history.ts';
import { privilegeLines } from './privilege-lines.ts';
import { columnCommentLines, indexLines } from './relation-parts.ts';
import { commentLine, type SchemaFile, sqlText } from './schema-file.ts';

interface ViewRow {
  readonly oid: number;
  readonly name: string;
  readonly ident: string;
  readonly materialized: boolean;
  readonly definition: string;
  readonly options: string | null;
  readonly comment: string | null;
}

export async function viewFiles({ query, schema, schemaIdent }: Catalog, history: MigrationHistory): Promise<SchemaFile[]> {
  const views = await query<ViewRow>(
    `SELECT c.oid, c.relname AS name, quote_ident(c.relname) AS ident, c.relkind = 'm' AS materialized,
            pg_get_viewdef(c.oid, true) AS definition, array_to_string(c.reloptions, ', ') AS options,
            obj_description(c.oid, 'pg_class') AS comment
       FROM pg_class c
      WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('v', 'm') AND ${notExtensionMember('pg_class', 'c.oid')}
      ORDER BY c.relname COLLATE "C"`,
    [schema],
  );
  const oids = views.map((view) => view.oid);
  const qualified = new Map(views.map((view) => [view.oid, `${schemaIdent}.${view.ident}`]));
  const name = (oid: number) => qualified.get(oid)!;
  const [indexes, columnComments, grants] = await Promise.all([
    indexLines(query, oids),
    columnCommentLines(query, oids, name),
    privilegeLines(query, 'pg_class', oids, (oid) => `TABLE ${name(oid)}`),
  ]);
  return views.map((view) => ({
    kind: 'views',
    name: view.name,
    origin: history.createdIn('view', view.name),
    comment: view.comment ?? undefined,
    text: sqlText(historyLines(history, 'view', view.name), [
      createView(view, name(view.oid)),
      indexes.get(view.oid)?.join('\n'),
      [commentLine(`${view.materialized ? 'MATERIALIZED VIEW' : 'VIEW'} ${name(view.oid)}`, view.comment), ...(columnComments.get(view.oid) ?? [])]
        .filter((line) => line !== undefined)
        .join('\n'),
      grants.get(view.oid)?.join('\n'),
    ]),
  }));
}

function createView(view: ViewRow, qualified: string): string {
  const options = view.options === null ? '' : ` WITH (${view.options})`;
  // pg_get_viewdef ends the query with a semicolon; a materialized view's data clause comes after it.
  const definition = view.definition.trimEnd().replace(/;$/, '');
  return view.materialized
    ? `CREATE MATERIALIZED VIEW ${qualified}${options} AS\n${definition}\n  WITH NO DATA;`
    : `CREATE VIEW ${qualified}${options} AS\n${definition};`;
}
