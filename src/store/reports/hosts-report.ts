// "Hosts" and "cluster state": every host with its reconcilers' status, and one host in detail.
import { type Kysely, sql } from 'kysely';
import type { HubDatabase } from '../database-schema.ts';
import { TARGET_ENVIRONMENT_ORDER } from './environments-report.ts';
import {
  countsFromRow,
  type EffectiveStatus,
  effectiveStatus,
  hasStatus,
  joinVersionAt,
  lastSeen,
  type ReportContext,
  staleBefore,
  type StatusCountRow,
  type StatusCounts,
  statusCountColumns,
} from './report-context.ts';

export interface HostSummary {
  name: string;
  type: string;
  firstSeenAt: Date;
  lastSeenAt: Date;
  /** No report from any of its reconcilers within the stale-after window. */
  stale: boolean;
  environments: string[];
  reconcilers: StatusCounts;
}

export interface HostsFilter {
  readonly environment?: string | undefined;
  /** Hosts with at least one reconciler in this status. */
  readonly status?: EffectiveStatus | undefined;
  /** Page after this host name. */
  readonly after?: string | undefined;
  readonly limit: number;
}

export async function hostsReport(
  db: Kysely<HubDatabase>,
  context: ReportContext,
  filter: HostsFilter,
): Promise<{ items: HostSummary[]; nextCursor: string | null }> {
  const conditions = [
    filter.after === undefined ? undefined : sql`h.name > ${filter.after}`,
    filter.environment === undefined
      ? undefined
      : sql`h.id IN (SELECT s.host_id FROM deployment_state s WHERE s.manifests_endpoint_id IN (
              SELECT t.manifests_endpoint_id FROM deployment_target_named t WHERE t.environment = ${filter.environment}))`,
    filter.status === undefined
      ? undefined
      : sql`h.id IN (SELECT s.host_id FROM deployment_state s WHERE ${hasStatus('s', filter.status, context)})`,
  ].filter((condition) => condition !== undefined);
  // Pick the page of hosts first; aggregate only their reconcilers.
  const rows = await sql<
    { name: string; type: string; first_seen_at: Date; last_seen_at: Date; environments: string[] | null } & StatusCountRow
  >`
    WITH page AS (
      SELECT h.id, h.name, h.type, h.first_seen_at, h.last_seen_at
        FROM host h
       ${conditions.length === 0 ? sql`` : sql`WHERE ${sql.join(conditions, sql` AND `)}`}
       ORDER BY h.name
       LIMIT ${filter.limit + 1}
    ), counts AS (
      SELECT s.host_id, ${statusCountColumns('s', context)}
        FROM deployment_state s WHERE s.host_id IN (SELECT id FROM page)
       GROUP BY s.host_id
    ), environments AS (
      -- In promotion order, as everywhere (DISTINCT first: array_agg(DISTINCT …) cannot order by another column).
      SELECT host_id, array_agg(environment ORDER BY environment_rank) AS names
        FROM (SELECT DISTINCT s.host_id, t.environment, t.environment_rank
                FROM deployment_state s
                JOIN deployment_target_named t ON t.manifests_endpoint_id = s.manifests_endpoint_id
               WHERE s.host_id IN (SELECT id FROM page)) pairs
       GROUP BY host_id
    )
    SELECT page.name, page.type, page.first_seen_at, page.last_seen_at, environments.names AS environments,
           coalesce(c.total, 0) AS total, coalesce(c.succeeded, 0) AS succeeded, coalesce(c.failed, 0) AS failed,
           coalesce(c.in_progress, 0) AS in_progress, coalesce(c.stale, 0) AS stale
      FROM page
      LEFT JOIN counts c ON c.host_id = page.id
      LEFT JOIN environments ON environments.host_id = page.id
     ORDER BY page.name`.execute(db);
  const cutoff = staleBefore(context);
  const items = rows.rows.slice(0, filter.limit).map((row) => ({
    name: row.name,
    type: row.type,
    firstSeenAt: row.first_seen_at,
    lastSeenAt: row.last_seen_at,
    stale: row.last_seen_at < cutoff,
    environments: row.environments ?? [],
    reconcilers: countsFromRow(row),
  }));
  const nextCursor = rows.rows.length > filter.limit ? items[items.length - 1]!.name : null;
  return { items, nextCursor };
}

export interface HostReconcilerTarget {
  workspace: string;
  application: string;
  workload: string;
  deploymentTarget: string;
  environment: string;
  /** The version that runs at the applied commit (its assignment's, or carried from an earlier one), if known. */
  deployedVersion: string | null;
  desiredVersion: string | null;
  desiredCommit: string | null;
}

export interface HostReconciler {
  reconciler: string;
  type: string;
  manifestsEndpoint: string;
  commit: string;
  status: EffectiveStatus;
  reportedStatus: 'success' | 'failure' | 'in_progress';
  statusMessage: string;
  /** When the reconciler entered its current state. */
  deployedAt: Date;
  lastSeenAt: Date;
  deploymentTargets: HostReconcilerTarget[];
}

export interface HostState {
  name: string;
  type: string;
  firstSeenAt: Date;
  lastSeenAt: Date;
  stale: boolean;
  reconcilers: HostReconciler[];
}

export async function hostStateReport(
  db: Kysely<HubDatabase>,
  context: ReportContext,
  hostName: string,
): Promise<HostState | undefined> {
  const host = await db
    .selectFrom('host')
    .select(['id', 'name', 'type', 'first_seen_at', 'last_seen_at'])
    .where('name', '=', hostName)
    .executeTakeFirst();
  if (host === undefined) return undefined;
  const rows = await sql<{
    reconciler_id: number;
    reconciler: string;
    type: string;
    endpoint: string;
    commit: string;
    status: EffectiveStatus;
    reported_status: HostReconciler['reportedStatus'];
    status_message: string;
    observed_at: Date;
    last_seen_at: Date;
    workspace: string | null;
    application: string | null;
    workload: string | null;
    target: string | null;
    environment: string | null;
    deployed_version: string | null;
    desired_version: string | null;
    desired_commit: string | null;
  }>`
    SELECT r.id AS reconciler_id, r.name AS reconciler, r.type, me.endpoint, s.gitops_commit_id AS commit,
           ${effectiveStatus('s', context)} AS status, s.status AS reported_status, s.status_message,
           s.observed_at, ${lastSeen('s')} AS last_seen_at,
           t.workspace, t.application, t.workload, t.name AS target, t.environment,
           dv.version AS deployed_version, cv.version AS desired_version, ca.gitops_commit_id AS desired_commit
      FROM deployment_state s
      JOIN reconciler r ON r.id = s.reconciler_id
      JOIN manifests_endpoint me ON me.id = s.manifests_endpoint_id
      LEFT JOIN deployment_target_named t ON t.manifests_endpoint_id = s.manifests_endpoint_id
      ${joinVersionAt('t', sql`s.gitops_commit_id`, 'dv')}
      LEFT JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
      LEFT JOIN workload_version cv ON cv.id = ca.workload_version_id
     WHERE s.host_id = ${host.id}
     ORDER BY r.name, ${TARGET_ENVIRONMENT_ORDER}, t.name`.execute(db);
  const reconcilers = new Map<number, HostReconciler>();
  for (const row of rows.rows) {
    let reconciler = reconcilers.get(row.reconciler_id);
    if (reconciler === undefined) {
      reconciler = {
        reconciler: row.reconciler,
        type: row.type,
        manifestsEndpoint: row.endpoint,
        commit: row.commit,
        status: row.status,
        reportedStatus: row.reported_status,
        statusMessage: row.status_message,
        deployedAt: row.observed_at,
        lastSeenAt: row.last_seen_at,
        deploymentTargets: [],
      };
      reconcilers.set(row.reconciler_id, reconciler);
    }
    if (row.target !== null) {
      reconciler.deploymentTargets.push({
        workspace: row.workspace!,
        application: row.application!,
        workload: row.workload!,
        deploymentTarget: row.target,
        environment: row.environment!,
        deployedVersion: row.deployed_version,
        desiredVersion: row.desired_version,
        desiredCommit: row.desired_commit,
      });
    }
  }
  return {
    name: host.name,
    type: host.type,
    firstSeenAt: host.first_seen_at,
    lastSeenAt: host.last_seen_at,
    stale: host.last_seen_at < staleBefore(context),
    reconcilers: [...reconcilers.values()],
  };
}
