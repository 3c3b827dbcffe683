// What a caller scoped to some workspaces may see beyond the rows that name a workspace: the
// environments, manifests endpoints and hosts that serve at least one of its workspaces' deployment
// targets. A host or endpoint shared with another workspace is visible (its other targets are cut
// from the answers); one that serves only other workspaces is not.
import { type Kysely, sql } from 'kysely';
import type { HubDatabase } from '../database-schema.ts';

export interface VisibleNames {
  readonly environments: ReadonlySet<string>;
  readonly endpoints: ReadonlySet<string>;
  readonly hosts: ReadonlySet<string>;
}

export async function visibleNames(db: Kysely<HubDatabase>, workspaces: readonly string[]): Promise<VisibleNames> {
  const rows = await sql<{ kind: 'environment' | 'endpoint' | 'host'; name: string }>`
    WITH targets AS MATERIALIZED (
      SELECT t.environment, t.manifests_endpoint_id FROM deployment_target_named t WHERE t.workspace = ANY(${[...workspaces]}::text[])
    )
    SELECT DISTINCT 'environment' AS kind, environment AS name FROM targets
    UNION ALL
    SELECT DISTINCT 'endpoint', me.endpoint FROM targets JOIN manifests_endpoint me ON me.id = targets.manifests_endpoint_id
    UNION ALL
    SELECT DISTINCT 'host', h.name
      FROM deployment_state s JOIN host h ON h.id = s.host_id
     WHERE s.manifests_endpoint_id IN (SELECT manifests_endpoint_id FROM targets)`.execute(db);
  const of = (kind: string): Set<string> => new Set(rows.rows.filter((row) => row.kind === kind).map((row) => row.name));
  return { environments: of('environment'), endpoints: of('endpoint'), hosts: of('host') };
}
