// What a polled feed (Azure Resource Graph) needs from the store besides writing: the manifests
// endpoints of deployment targets it knows by name, and the reconcilers it reported before.
import { type Kysely, sql } from 'kysely';
import type { TargetReference } from '../normalize/flux-configuration.ts';
import type { HubDatabase } from './database-schema.ts';

export function targetKey(target: TargetReference): string {
  return JSON.stringify([target.environment, target.workspace ?? null, target.application ?? null, target.workload, target.deploymentTarget]);
}

/** A deployment target a reference names: its endpoint, and where it belongs. */
export interface TargetMatch {
  readonly endpoint: string;
  readonly workspace: string;
  readonly application: string;
}

/**
 * Every deployment target each reference names, keyed by `targetKey`; unknown targets are absent.
 * A reference without workspace and application can name several: the caller decides.
 */
export async function targetEndpoints(db: Kysely<HubDatabase>, targets: readonly TargetReference[]): Promise<Map<string, TargetMatch[]>> {
  const found = new Map<string, TargetMatch[]>();
  if (targets.length === 0) return found;
  const rows = await sql<{
    environment: string;
    workspace: string | null;
    application: string | null;
    workload: string;
    target: string;
    endpoint: string;
    target_workspace: string;
    target_application: string;
  }>`
    SELECT DISTINCT x.environment, x.workspace, x.application, x.workload, x.target, me.endpoint,
           t.workspace AS target_workspace, t.application AS target_application
      FROM unnest(${targets.map((t) => t.environment)}::text[], ${targets.map((t) => t.workspace ?? null)}::text[],
                  ${targets.map((t) => t.application ?? null)}::text[], ${targets.map((t) => t.workload)}::text[],
                  ${targets.map((t) => t.deploymentTarget)}::text[]) AS x(environment, workspace, application, workload, target)
      JOIN deployment_target_named t
        ON t.environment = x.environment AND t.workload = x.workload AND t.name = x.target
       AND (x.workspace IS NULL OR t.workspace = x.workspace) AND (x.application IS NULL OR t.application = x.application)
      JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
     ORDER BY target_workspace, target_application`.execute(db);
  for (const row of rows.rows) {
    const key = targetKey({
      environment: row.environment,
      workspace: row.workspace ?? undefined,
      application: row.application ?? undefined,
      workload: row.workload,
      deploymentTarget: row.target,
    });
    found.set(key, [...(found.get(key) ?? []), { endpoint: row.endpoint, workspace: row.target_workspace, application: row.target_application }]);
  }
  return found;
}

/** The active reconcilers a feed reported last, as host and reconciler names. */
export async function reconcilersReportedBy(
  db: Kysely<HubDatabase>,
  reportedBy: string,
): Promise<{ host: string; reconciler: string }[]> {
  return db
    .selectFrom('reconciler as r')
    .innerJoin('host as h', 'h.id', 'r.host_id')
    .select(['h.name as host', 'r.name as reconciler'])
    .where('r.reported_by', '=', reportedBy)
    .where('r.removed_at', 'is', null)
    .execute();
}
