// roles/<name>.sql: the roles the migrations grant to (kalypso_reader, created by schema/0004),
// with their attributes and what they were granted on the schema itself; their grants on tables,
// views and functions are in those objects' files. Roles live in the whole server, so only roles
// named in this schema's grants are listed — never the migrating user or PostgreSQL's own pg_*.
// Memberships (GRANT kalypso_reader TO grafana) are an installation's, not the migrations'.
import type { Catalog } from './catalog-query.ts';
import { historyLines, type MigrationHistory } from './migration-history.ts';
import { commentLine, type SchemaFile, sqlText } from './schema-file.ts';

interface RoleRow {
  readonly name: string;
  readonly ident: string;
  readonly attributes: string;
  readonly schema_privileges: string | null;
  readonly comment: string | null;
}

export async function roleFiles({ query, schema, schemaIdent }: Catalog, history: MigrationHistory): Promise<SchemaFile[]> {
  const roles = await query<RoleRow>(
    `WITH acl AS (
       SELECT relacl AS acl, relowner AS owner FROM pg_class WHERE relnamespace = $1::regnamespace
       UNION ALL SELECT proacl, proowner FROM pg_proc WHERE pronamespace = $1::regnamespace
       UNION ALL SELECT typacl, typowner FROM pg_type WHERE typnamespace = $1::regnamespace
       UNION ALL SELECT nspacl, nspowner FROM pg_namespace WHERE oid = $1::regnamespace
     )
     SELECT r.rolname AS name, quote_ident(r.rolname) AS ident,
            concat_ws(' ', CASE WHEN r.rolcanlogin THEN 'LOGIN' ELSE 'NOLOGIN' END,
                      CASE WHEN r.rolsuper THEN 'SUPERUSER' END, CASE WHEN r.rolcreatedb THEN 'CREATEDB' END,
                      CASE WHEN r.rolcreaterole THEN 'CREATEROLE' END, CASE WHEN NOT r.rolinherit THEN 'NOINHERIT' END,
                      CASE WHEN r.rolreplication THEN 'REPLICATION' END, CASE WHEN r.rolbypassrls THEN 'BYPASSRLS' END,
                      CASE WHEN r.rolconnlimit <> -1 THEN 'CONNECTION LIMIT ' || r.rolconnlimit END) AS attributes,
            (SELECT string_agg(a.privilege_type, ', ' ORDER BY a.privilege_type COLLATE "C")
               FROM pg_namespace n, aclexplode(n.nspacl) a WHERE n.oid = $1::regnamespace AND a.grantee = r.oid) AS schema_privileges,
            shobj_description(r.oid, 'pg_authid') AS comment
       FROM pg_roles r
      WHERE r.oid IN (SELECT a.grantee FROM acl, aclexplode(acl.acl) a WHERE a.grantee <> acl.owner) AND r.rolname !~ '^pg_'
      ORDER BY r.rolname COLLATE "C"`,
    [schema],
  );
  return roles.map((role) => ({
    kind: 'roles',
    name: role.name,
    origin: history.createdIn('role', role.name),
    comment: role.comment ?? undefined,
    text: sqlText(historyLines(history, 'role', role.name), [
      `CREATE ROLE ${role.ident} ${role.attributes};`,
      role.schema_privileges === null ? undefined : `GRANT ${role.schema_privileges} ON SCHEMA ${schemaIdent} TO ${role.ident};`,
      commentLine(`ROLE ${role.ident}`, role.comment),
    ]),
  }));
}
