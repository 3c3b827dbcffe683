// The current schema is checked, not trusted: an object the generator has no renderer for would be
// missing from schema/current/ without anyone noticing, and a change to it would never make the
// files stale. So the generator refuses to run when the migrations made one; the fix is to render
// it (a few lines in the file for its kind), not to leave it out.
import type { Catalog } from './catalog-query.ts';

const UNRENDERED = `
  SELECT 'type ' || typname FROM pg_type t
   WHERE typnamespace = $1::regnamespace AND typcategory <> 'A' AND (typtype IN ('d', 'r', 'm', 'b', 'p')
         OR (typtype = 'c' AND (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c'))
     AND NOT EXISTS (SELECT FROM pg_depend e WHERE e.classid = 'pg_type'::regclass AND e.objid = t.oid AND e.deptype = 'e')
  UNION ALL SELECT 'aggregate ' || proname FROM pg_proc WHERE pronamespace = $1::regnamespace AND prokind = 'a'
  UNION ALL SELECT 'relation ' || relname || ' of kind ' || relkind::text FROM pg_class
   WHERE relnamespace = $1::regnamespace AND relkind NOT IN ('r', 'p', 'v', 'm', 'i', 'I', 'S', 't')
  UNION ALL SELECT 'sequence ' || s.relname || ' (not an identity column''s)' FROM pg_class s
   WHERE s.relnamespace = $1::regnamespace AND s.relkind = 'S'
     AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = s.oid AND d.deptype = 'i')
  UNION ALL SELECT 'table inheritance of ' || c.relname FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid
   WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
  UNION ALL SELECT 'row level security on ' || relname FROM pg_class
   WHERE relnamespace = $1::regnamespace AND (relrowsecurity OR relforcerowsecurity)
  UNION ALL SELECT 'replica identity of ' || relname FROM pg_class
   WHERE relnamespace = $1::regnamespace AND relkind IN ('r', 'p') AND relreplident <> 'd'
  UNION ALL SELECT 'policy ' || polname FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid WHERE c.relnamespace = $1::regnamespace
  UNION ALL SELECT 'rule ' || rulename FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
   WHERE c.relnamespace = $1::regnamespace AND r.rulename <> '_RETURN'
  UNION ALL SELECT 'column privileges on ' || c.relname || '.' || a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
   WHERE c.relnamespace = $1::regnamespace AND a.attacl IS NOT NULL
  UNION ALL SELECT 'statistics object ' || stxname FROM pg_statistic_ext WHERE stxnamespace = $1::regnamespace
  UNION ALL SELECT 'operator ' || oprname FROM pg_operator WHERE oprnamespace = $1::regnamespace
  UNION ALL SELECT 'collation ' || collname FROM pg_collation WHERE collnamespace = $1::regnamespace
  UNION ALL SELECT 'text search configuration ' || cfgname FROM pg_ts_config WHERE cfgnamespace = $1::regnamespace
  UNION ALL SELECT 'extension ' || extname FROM pg_extension WHERE extname <> 'plpgsql'
  UNION ALL SELECT 'event trigger ' || evtname FROM pg_event_trigger
  UNION ALL SELECT 'schema ' || nspname FROM pg_namespace
   WHERE oid <> $1::regnamespace AND nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND nspname !~ '^pg_(toast_)?temp_'
  UNION ALL SELECT 'default privileges' FROM pg_default_acl`;

export async function refuseUnrendered({ query, schema }: Catalog): Promise<void> {
  const found = (await query<{ object: string }>(`SELECT object FROM (${UNRENDERED}) u(object) ORDER BY object COLLATE "C"`, [schema])).map((row) => row.object);
  if (found.length > 0) {
    throw new Error(
      `the migrations made objects the current-schema generator does not render: ${found.join(', ')}. ` +
        'Render them in src/store/current-schema/ so that schema/current/ shows them and their changes.',
    );
  }
}
