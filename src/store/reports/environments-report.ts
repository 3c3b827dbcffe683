// "Environments": every environment in promotion order, with its targets, hosts and reconcilers.
import { type Kysely, sql } from 'kysely';
import type { HubDatabase } from '../database-schema.ts';
import {
  countsFromRow,
  effectiveStatus,
  type ReportContext,
  type StatusCountRow,
  type StatusCounts,
  statusCountColumns,
} from './report-context.ts';

export interface EnvironmentSummary {
  name: string;
  promotionRank: number | null;
  deploymentTargets: number;
  hosts: number;
  reconcilers: StatusCounts;
}

/** Promotion order: an explicit rank first, then the order environments first appeared in. */
export const ENVIRONMENT_ORDER = sql`coalesce(e.promotion_rank, 2147483647), e.id`;

export async function environmentsReport(db: Kysely<HubDatabase>, context: ReportContext): Promise<EnvironmentSummary[]> {
  const status = effectiveStatus('s', context);
  const rows = await sql<{ name: string; promotion_rank: number | null; targets: number; hosts: number } & StatusCountRow>`
    WITH subscribers AS (
      SELECT t.environment_id, r.id AS reconciler_id, r.host_id, ${status} AS status
        FROM deployment_target t
        JOIN reconciler r ON r.manifests_endpoint_id = t.manifests_endpoint_id AND r.removed_at IS NULL
        JOIN deployment_state s ON s.reconciler_id = r.id
    ), per_environment AS (
      SELECT environment_id, count(DISTINCT host_id)::int AS hosts,
             ${statusCountColumns(sql`status`, sql`reconciler_id`, { distinct: true })}
        FROM subscribers GROUP BY environment_id
    )
    SELECT e.name, e.promotion_rank,
           (SELECT count(*)::int FROM deployment_target t WHERE t.environment_id = e.id) AS targets,
           coalesce(p.hosts, 0) AS hosts, coalesce(p.total, 0) AS total, coalesce(p.succeeded, 0) AS succeeded,
           coalesce(p.failed, 0) AS failed, coalesce(p.in_progress, 0) AS in_progress, coalesce(p.stale, 0) AS stale
      FROM environment e LEFT JOIN per_environment p ON p.environment_id = e.id
     ORDER BY ${ENVIRONMENT_ORDER}`.execute(db);
  return rows.rows.map((row) => ({
    name: row.name,
    promotionRank: row.promotion_rank,
    deploymentTargets: row.targets,
    hosts: row.hosts,
    reconcilers: countsFromRow(row),
  }));
}

export async function environmentExists(db: Kysely<HubDatabase>, name: string): Promise<boolean> {
  const row = await db.selectFrom('environment').select('id').where('name', '=', name).executeTakeFirst();
  return row !== undefined;
}
