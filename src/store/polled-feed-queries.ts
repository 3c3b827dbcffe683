// What a polled feed (Azure Resource Graph) needs from the store besides writing: the manifests
// endpoints of deployment targets it knows by name, and the reconcilers it reported before.
import { type Kysely, sql } from 'kysely';
import type { TargetReference } from '../normalize/flux-configuration.ts';
import type { HubDatabase } from './database-schema.ts';

export function targetKey(target: TargetReference): string {
  return JSON.stringify([target.environment, target.workspace ?? null, target.application ?? null, target.workload, target.deploymentTarget]);
}

/** Endpoints of the named deployment targets, keyed by `targetKey`; unknown targets are absent. */
export async function targetEndpoints(db: Kysely<HubDatabase>, targets: readonly TargetReference[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (targets.length === 0) return found;
  const rows = await sql<{ environment: string; workspace: string | null; application: string | null; workload: string; target: string; endpoint: string }>`
    SELECT DISTINCT ON (x.environment, x.workspace, x.application, x.workload, x.target)
           x.environment, x.workspace, x.application, x.workload, x.target, me.endpoint
      FROM unnest(${targets.map((t) => t.environment)}::text[], ${targets.map((t) => t.workspace ?? null)}::text[],
                  ${targets.map((t) => t.application ?? null)}::text[], ${targets.map((t) => t.workload)}::text[],
                  ${targets.map((t) => t.deploymentTarget)}::text[]) AS x(environment, workspace, application, workload, target)
      JOIN deployment_target_named t
        ON t.environment = x.environment AND t.workload = x.workload AND t.name = x.target
       AND (x.workspace IS NULL OR t.workspace = x.workspace) AND (x.application IS NULL OR t.application = x.application)
      JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
     ORDER BY x.environment, x.workspace, x.application, x.workload, x.target, t.id`.execute(db);
  for (const row of rows.rows) {
    found.set(
      targetKey({
        environment: row.environment,
        workspace: row.workspace ?? undefined,
        application: row.application ?? undefined,
        workload: row.workload,
        deploymentTarget: row.target,
      }),
      row.endpoint,
    );
  }
  return found;
}

/** The active reconcilers a feed reported last, as host and reconciler names. */
export async function reconcilersReportedBy(
  db: Kysely<HubDatabase>,
  reportedBy: string,
): Promise<{ host: string; reconciler: string }[]> {
  const rows = await sql<{ host: string; reconciler: string }>`
    SELECT h.name AS host, r.name AS reconciler
      FROM reconciler r JOIN host h ON h.id = r.host_id
     WHERE r.reported_by = ${reportedBy} AND r.removed_at IS NULL`.execute(db);
  return rows.rows;
}
