// Grants as the migrations left them: the differences from the privileges PostgreSQL gives every
// new object of that kind (acldefault), as GRANT and REVOKE lines. The owner's own privileges are
// left out — who owns the objects depends on who migrated, not on the migrations.
import { type CatalogQuery, groupBy } from './catalog-query.ts';

/** Where each kind keeps its ACL and owner, and its kind letter for acldefault(). */
const ACL_COLUMNS = {
  pg_class: { acl: 'relacl', owner: 'relowner', kind: `CASE relkind WHEN 'S' THEN 's' ELSE 'r' END` },
  pg_proc: { acl: 'proacl', owner: 'proowner', kind: `'f'` },
  pg_type: { acl: 'typacl', owner: 'typowner', kind: `'T'` },
} as const;

interface PrivilegeRow {
  readonly oid: number;
  readonly action: 'GRANT' | 'REVOKE';
  readonly grantee: string;
  readonly grantable: boolean;
  readonly privileges: string;
}

/** For each object that differs from the defaults, its lines; `target(oid)` names it (`TABLE public.x`). */
export async function privilegeLines(
  query: CatalogQuery,
  catalog: keyof typeof ACL_COLUMNS,
  oids: readonly number[],
  target: (oid: number) => string,
): Promise<Map<number, string[]>> {
  const { acl, owner, kind } = ACL_COLUMNS[catalog];
  const rows = await query<PrivilegeRow>(
    `WITH object AS (
       SELECT oid, ${acl} AS acl, ${owner} AS owner, (${kind})::"char" AS kind FROM ${catalog} WHERE oid = ANY($1::oid[])
     ), actual AS (
       SELECT o.oid, a.grantee, a.privilege_type, a.is_grantable
         FROM object o, aclexplode(coalesce(o.acl, acldefault(o.kind, o.owner))) a WHERE a.grantee <> o.owner
     ), usual AS (
       SELECT o.oid, a.grantee, a.privilege_type, a.is_grantable
         FROM object o, aclexplode(acldefault(o.kind, o.owner)) a WHERE a.grantee <> o.owner
     ), change AS (
       (SELECT 'GRANT' AS action, * FROM actual EXCEPT SELECT 'GRANT', * FROM usual)
       UNION ALL
       (SELECT 'REVOKE', * FROM usual EXCEPT SELECT 'REVOKE', * FROM actual)
     )
     SELECT oid, action, grantee, is_grantable AS grantable,
            string_agg(privilege_type, ', ' ORDER BY privilege_type COLLATE "C") AS privileges
       FROM (SELECT *, CASE WHEN grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(grantee)) END AS grantee_name FROM change)
            AS named(action, oid, grantee_oid, privilege_type, is_grantable, grantee)
      GROUP BY oid, action, grantee, is_grantable
      ORDER BY oid, action DESC, grantee COLLATE "C", is_grantable`,
    [oids],
  );
  const lines = new Map<number, string[]>();
  for (const [oid, changes] of groupBy(rows, (row) => row.oid)) {
    lines.set(
      oid,
      changes.map((row) =>
        row.action === 'GRANT'
          ? `GRANT ${row.privileges} ON ${target(oid)} TO ${row.grantee}${row.grantable ? ' WITH GRANT OPTION' : ''};`
          : `REVOKE ${row.privileges} ON ${target(oid)} FROM ${row.grantee};`,
      ),
    );
  }
  return lines;
}
