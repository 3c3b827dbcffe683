// "Environments": every environment in promotion order, with its targets, hosts and reconcilers.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Environment } from '../../contract/answer-types.ts';
import type { HubDatabase } from '../database-schema.ts';
import { summariesCurrent } from '../summary-refresh.ts';
import { countsFromRow, isoTime, type ReportContext, type StatusCountRow, summedStatusCountColumns } from './report-context.ts';

/**
 * Promotion order for rows of the deployment_target_named view (aliased `t`). The rule itself —
 * configured environments first, in the configured order, then the others in the order first seen
 * — is defined once, in the environment_in_order view (schema/0009), which the reporting views use too.
 */
export const TARGET_ENVIRONMENT_ORDER = sql`t.environment_rank`;

type EnvironmentRow = {
  name: string;
  configured_rank: number | null;
  targets: number;
  hosts: number;
  latest_commit: string | null;
  latest_assigned_at: Date | null;
} & StatusCountRow;

/** Every environment; for a caller scoped to `workspaces`, those with one of their targets, counted over those alone. */
export async function environmentsReport(db: Kysely<HubDatabase>, context: ReportContext, workspaces?: readonly string[]): Promise<Environment[]> {
  await summariesCurrent(db, context.asOf);
  const rows = workspaces === undefined ? await wholeFleet(db) : await scopedToWorkspaces(db, workspaces);
  return rows.map((row) => ({
    name: row.name,
    promotionRank: row.configured_rank,
    deploymentTargets: row.targets,
    hosts: row.hosts,
    reconcilers: countsFromRow(row),
    latestAssignment: row.latest_commit === null ? null : { commit: row.latest_commit, assignedAt: isoTime(row.latest_assigned_at!) },
  }));
}

/**
 * The newest assignment of environment `e` that is still a target's current one (of the targets
 * in `scope`, when given): assignments walked newest first (schema/0044), each checked against its
 * target (a subplan keeps the walk in index order; joined, the planner sorted every target's assignments).
 */
function latestAssignment(scope?: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`LEFT JOIN LATERAL (
        SELECT a.gitops_commit_id, a.assigned_at
          FROM deployment_assignment a
         WHERE (SELECT t.environment_id FROM deployment_target t WHERE t.id = a.deployment_target_id AND t.current_assignment_id = a.id) = e.id
           ${scope === undefined ? sql`` : sql`AND a.deployment_target_id IN (${scope})`}
         ORDER BY a.assigned_at DESC, a.id DESC
         LIMIT 1) l ON true`;
}

/** The whole fleet: the counts kept per environment (schema/0050). */
async function wholeFleet(db: Kysely<HubDatabase>): Promise<EnvironmentRow[]> {
  const rows = await sql<EnvironmentRow>`
    SELECT e.name, e.configured_rank, coalesce(s.targets, 0) AS targets, coalesce(s.hosts, 0) AS hosts,
           coalesce(s.total, 0) AS total, coalesce(s.succeeded, 0) AS succeeded, coalesce(s.failed, 0) AS failed,
           coalesce(s.in_progress, 0) AS in_progress, coalesce(s.stale, 0) AS stale,
           l.gitops_commit_id AS latest_commit, l.assigned_at AS latest_assigned_at
      FROM environment_in_order e
      LEFT JOIN environment_summary s ON s.environment_id = e.id
      ${latestAssignment()}
     ORDER BY e.environment_rank`.execute(db);
  return rows.rows;
}

/**
 * The targets of these workspaces, and the hosts that pull their endpoints, counted at the request:
 * the kept counts are of whole environments.
 */
async function scopedToWorkspaces(db: Kysely<HubDatabase>, workspaces: readonly string[]): Promise<EnvironmentRow[]> {
  // A reconciler pulls exactly one endpoint, so an environment's reconcilers are those on its
  // (distinct) endpoints: summing the endpoints' counts (schema/0012) counts each once.
  const rows = await sql<EnvironmentRow>`
    WITH scoped_target AS MATERIALIZED (
      SELECT t.id, t.environment_id, t.manifests_endpoint_id FROM deployment_target_named t WHERE t.workspace = ANY(${[...workspaces]}::text[])
    ), environment_endpoints AS (
      SELECT DISTINCT environment_id, manifests_endpoint_id FROM scoped_target
    ), per_environment AS (
      SELECT ee.environment_id, ${summedStatusCountColumns('c')}
        FROM environment_endpoints ee JOIN endpoint_status_count c ON c.manifests_endpoint_id = ee.manifests_endpoint_id
       GROUP BY ee.environment_id
    ), per_environment_hosts AS (
      SELECT ee.environment_id, count(DISTINCT s.host_id)::int AS hosts
        FROM environment_endpoints ee
        JOIN deployment_state s ON s.manifests_endpoint_id = ee.manifests_endpoint_id
       GROUP BY ee.environment_id
    ), per_environment_targets AS (
      SELECT environment_id, count(*)::int AS targets FROM scoped_target GROUP BY environment_id
    )
    SELECT e.name, e.configured_rank, pt.targets, coalesce(ph.hosts, 0) AS hosts, coalesce(p.total, 0) AS total,
           coalesce(p.succeeded, 0) AS succeeded, coalesce(p.failed, 0) AS failed, coalesce(p.in_progress, 0) AS in_progress,
           coalesce(p.stale, 0) AS stale, l.gitops_commit_id AS latest_commit, l.assigned_at AS latest_assigned_at
      FROM environment_in_order e
      JOIN per_environment_targets pt ON pt.environment_id = e.id
      LEFT JOIN per_environment p ON p.environment_id = e.id
      LEFT JOIN per_environment_hosts ph ON ph.environment_id = e.id
      ${latestAssignment(sql`SELECT st.id FROM scoped_target st`)}
     ORDER BY e.environment_rank`.execute(db);
  return rows.rows;
}

export async function environmentExists(db: Kysely<HubDatabase>, name: string): Promise<boolean> {
  return (await knownEnvironments(db, [name])).has(name);
}

/** Which of `names` are environments, in one statement. */
export async function knownEnvironments(db: Kysely<HubDatabase>, names: readonly string[]): Promise<Set<string>> {
  const known = await db.selectFrom('environment').select('name').where('name', 'in', [...names]).execute();
  return new Set(known.map((row) => row.name));
}
