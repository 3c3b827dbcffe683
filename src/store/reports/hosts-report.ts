// "Hosts" and "cluster state": every host with its reconcilers' status, and one host in detail.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ArgoCdDetails, Host, HostReconciler, HostReconcilerTarget, HostsPage, HostState, HostTotals } from '../../contract/answer-types.ts';
import { RECONCILER_TYPES } from '../../model/deployment-records.ts';
import type { HubDatabase } from '../database-schema.ts';
import { TARGET_ENVIRONMENT_ORDER } from './environments-report.ts';
import { summariesCurrent } from '../summary-refresh.ts';
import {
  countsFromRow,
  type EffectiveStatus,
  effectiveStatus,
  isoTime,
  joinVersionAt,
  lastSeen,
  type ReportContext,
  rowLimit,
  staleBefore,
  type StatusCountRow,
} from './report-context.ts';

export interface HostsFilter {
  readonly environment?: string | undefined;
  /** Hosts with at least one reconciler in this status. */
  readonly status?: EffectiveStatus | undefined;
  /** Hosts silent longer than stale-after (true), or not (false). */
  readonly offline?: boolean | undefined;
  /** Hosts with a reconciler off its target's desired rollout (true), or none (false). */
  readonly drifting?: boolean | undefined;
  /** A part of the name, in any case. */
  readonly search?: string | undefined;
  /** Page after this host name (in natural order). */
  readonly after?: string | undefined;
  readonly limit: number;
}

type TotalsRow = { [K in `matching_${keyof HostTotals}` | `fleet_${keyof HostTotals}`]: number } & { page_offset: number };
type PageRow = {
  name: string | null;
  type: string;
  first_seen_at: Date;
  last_seen_at: Date;
  environments: string[] | null;
  reconciler_types: string[] | null;
  drifting_reconcilers: number;
} & StatusCountRow;

/** The host_summary column that counts reconcilers in each effective status. */
const STATUS_COLUMN: Record<EffectiveStatus, string> = { success: 'succeeded', failure: 'failed', in_progress: 'in_progress', stale: 'stale' };

/**
 * One statement, so that the totals and the page agree. Per-host counts, drift, environments and
 * reconciler types come from host_summary, kept current on write (schema/0012, 0037); the page itself is a range of the
 * natural-order index (schema/0011) from the cursor, keeping only the hosts that match.
 */
export async function hostsReport(db: Kysely<HubDatabase>, context: ReportContext, filter: HostsFilter): Promise<HostsPage> {
  await summariesCurrent(db, context.asOf);
  const cutoff = staleBefore(context);
  const rows = await readHostsPage(db, filter, cutoff);
  const first = rows[0]!;
  const hosts = rows.filter((row): row is typeof row & { name: string } => row.name !== null);
  const items = hosts.slice(0, filter.limit).map((row) => hostSummaryOf(row, cutoff));
  return {
    items,
    nextCursor: hosts.length > filter.limit ? items[items.length - 1]!.name : null,
    totals: { hosts: first.matching_hosts, offline: first.matching_offline, failing: first.matching_failing, drifting: first.matching_drifting },
    fleet: { hosts: first.fleet_hosts, offline: first.fleet_offline, failing: first.fleet_failing, drifting: first.fleet_drifting },
    offset: first.page_offset,
  };
}

/**
 * The filters on a host: each one a condition on the host and its summary (h, hs, joined LEFT). A
 * host without a summary has no environment and no reconciler in any status: the conditions that
 * need one are false on a missing summary as written (no coalesce), so that the planner may read
 * the matching summaries first rather than join every host's and filter after.
 */
function hostConditionsOf(filter: HostsFilter, cutoff: Date): RawBuilder<unknown>[] {
  return [
    filter.environment === undefined ? undefined : sql`(SELECT e.id FROM environment e WHERE e.name = ${filter.environment}) = ANY(hs.environment_ids)`,
    filter.status === undefined ? undefined : sql`${sql.ref(`hs.${STATUS_COLUMN[filter.status]}`)} > 0`,
    filter.offline === undefined ? undefined : filter.offline ? sql`h.last_seen_at < ${cutoff}::timestamptz` : sql`h.last_seen_at >= ${cutoff}::timestamptz`,
    filter.drifting === undefined ? undefined : filter.drifting ? sql`hs.drifting > 0` : sql`coalesce(hs.drifting, 0) = 0`,
    filter.search === undefined ? undefined : sql`strpos(lower(h.name), lower(${filter.search})) > 0`,
  ].filter((condition) => condition !== undefined);
}

/**
 * The totals on every row, and the page's hosts (one more than asked); one row with a null name when
 * the page is empty. The fleet's totals are two passes over plain rows (the hosts, their summaries),
 * not a join of the two: at fleet L the join of 20,000 hosts to their summaries, kept for the totals
 * and the page, took 45 of the statement's 56 ms (docs/benchmarks/fleet-l-part10.md). Only a
 * filtered page joins them, for the hosts that match.
 */
async function readHostsPage(db: Kysely<HubDatabase>, filter: HostsFilter, cutoff: Date): Promise<(TotalsRow & PageRow)[]> {
  const conditions = hostConditionsOf(filter, cutoff);
  const after = filter.after === undefined ? undefined : sql`(h.name_sort_key, h.name) > (kalypso_name_sort_key(${filter.after}) COLLATE "C", ${filter.after})`;
  const beforePage = after === undefined ? sql`0` : sql`count(*) FILTER (WHERE NOT ${after})::int`;
  const filtered = conditions.length > 0;
  const pageConditions = [filtered ? sql`h.id IN (SELECT m.id FROM matching m)` : undefined, after].filter((condition) => condition !== undefined);
  const rows = await sql<TotalsRow & PageRow>`
    WITH fleet_hosts AS (
      SELECT count(*)::int AS hosts, count(*) FILTER (WHERE h.last_seen_at < ${cutoff}::timestamptz)::int AS offline,
             ${filtered ? sql`0` : beforePage} AS page_offset
        FROM host h
    ), fleet_summaries AS (
      -- A host without a summary yet is neither failing nor drifting.
      SELECT count(*) FILTER (WHERE hs.failed > 0)::int AS failing, count(*) FILTER (WHERE hs.drifting > 0)::int AS drifting
        FROM host_summary hs
    ), ${
      filtered
        ? sql`matching AS MATERIALIZED (
      SELECT h.id, h.name_sort_key, h.name, h.last_seen_at < ${cutoff}::timestamptz AS offline,
             coalesce(hs.failed, 0) > 0 AS failing, coalesce(hs.drifting, 0) > 0 AS drifting
        FROM host h
        LEFT JOIN host_summary hs ON hs.host_id = h.id
       WHERE ${sql.join(conditions, sql` AND `)}
    ), matching_totals AS (
      SELECT count(*)::int AS hosts, count(*) FILTER (WHERE h.offline)::int AS offline, count(*) FILTER (WHERE h.failing)::int AS failing,
             count(*) FILTER (WHERE h.drifting)::int AS drifting, ${beforePage} AS page_offset
        FROM matching h
    ),`
        : sql`matching_totals AS (
      SELECT fh.hosts, fh.offline, fs.failing, fs.drifting, fh.page_offset FROM fleet_hosts fh, fleet_summaries fs
    ),`
    } totals AS (
      SELECT mt.hosts AS matching_hosts, mt.offline AS matching_offline, mt.failing AS matching_failing, mt.drifting AS matching_drifting,
             fh.hosts AS fleet_hosts, fh.offline AS fleet_offline, fs.failing AS fleet_failing, fs.drifting AS fleet_drifting,
             mt.page_offset
        FROM matching_totals mt, fleet_hosts fh, fleet_summaries fs
    ), page AS (
      SELECT h.id, h.name, h.name_sort_key, h.type, h.first_seen_at, h.last_seen_at
        FROM host h
       ${pageConditions.length === 0 ? sql`` : sql`WHERE ${sql.join(pageConditions, sql` AND `)}`}
       ORDER BY h.name_sort_key, h.name
       LIMIT ${rowLimit(filter.limit + 1)}
    )
    SELECT totals.*, page.name, page.type, page.first_seen_at, page.last_seen_at,
           -- In promotion order, as everywhere: ranked once (environment_in_order is a window
           -- function, which a subquery per host ran again for each host of the page).
           ARRAY(SELECT o.name FROM unnest(ranked.ids, ranked.names) WITH ORDINALITY AS o(id, name, rank)
                  WHERE o.id = ANY(hs.environment_ids) ORDER BY o.rank) AS environments,
           -- Kept by the summary refresh (schema/0037), as the counts are.
           hs.reconciler_types,
           coalesce(hs.total, 0) AS total, coalesce(hs.succeeded, 0) AS succeeded, coalesce(hs.failed, 0) AS failed,
           coalesce(hs.in_progress, 0) AS in_progress, coalesce(hs.stale, 0) AS stale, coalesce(hs.drifting, 0) AS drifting_reconcilers
      FROM totals
      CROSS JOIN (SELECT array_agg(e.id ORDER BY e.environment_rank) AS ids, array_agg(e.name ORDER BY e.environment_rank) AS names
                    FROM environment_in_order e) ranked
      LEFT JOIN page ON true
      LEFT JOIN host_summary hs ON hs.host_id = page.id
     ORDER BY page.name_sort_key, page.name`.execute(db);
  return rows.rows;
}

function hostSummaryOf(row: PageRow & { name: string }, cutoff: Date): Host {
  return {
    name: row.name,
    type: row.type,
    firstSeenAt: isoTime(row.first_seen_at),
    lastSeenAt: isoTime(row.last_seen_at),
    stale: row.last_seen_at < cutoff,
    environments: row.environments ?? [],
    reconcilerTypes: inTypeOrder(row.reconciler_types ?? []),
    reconcilers: countsFromRow(row),
    drifting: row.drifting_reconcilers,
  };
}

/** flux, argocd, arc, wo, custom; a type the hub does not know (none today) last. */
function inTypeOrder(types: readonly string[]): string[] {
  const rank = (type: string): number => {
    const index = (RECONCILER_TYPES as readonly string[]).indexOf(type);
    return index < 0 ? RECONCILER_TYPES.length : index;
  };
  return [...types].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
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
  const rows = await readHostReconcilerRows(db, context, host.id);
  return {
    name: host.name,
    type: host.type,
    firstSeenAt: isoTime(host.first_seen_at),
    lastSeenAt: isoTime(host.last_seen_at),
    stale: host.last_seen_at < staleBefore(context),
    reconcilers: reconcilersOf(rows),
  };
}

interface HostReconcilerRow {
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
  details: unknown;
  workspace: string | null;
  application: string | null;
  workload: string | null;
  target: string | null;
  environment: string | null;
  deployed_version: string | null;
  desired_version: string | null;
  desired_commit: string | null;
}

/** The host's reconcilers, one row per deployment target each pulls (one with a null target when it pulls none). */
async function readHostReconcilerRows(db: Kysely<HubDatabase>, context: ReportContext, hostId: number): Promise<HostReconcilerRow[]> {
  const rows = await sql<HostReconcilerRow>`
    SELECT r.id AS reconciler_id, r.name AS reconciler, r.type, me.endpoint, s.gitops_commit_id AS commit,
           ${effectiveStatus('s', context)} AS status, s.status AS reported_status, s.status_message,
           s.observed_at, ${lastSeen('s')} AS last_seen_at, s.details,
           t.workspace, t.application, t.workload, t.name AS target, t.environment,
           dv.version AS deployed_version, cv.version AS desired_version, ca.gitops_commit_id AS desired_commit
      FROM deployment_state s
      JOIN reconciler r ON r.id = s.reconciler_id
      JOIN manifests_endpoint me ON me.id = s.manifests_endpoint_id
      LEFT JOIN deployment_target_named t ON t.manifests_endpoint_id = s.manifests_endpoint_id
      ${joinVersionAt('t', sql`s.gitops_commit_id`, 'dv')}
      LEFT JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
      LEFT JOIN workload_version cv ON cv.id = ca.workload_version_id
     WHERE s.host_id = ${hostId}
     ORDER BY r.name, ${TARGET_ENVIRONMENT_ORDER}, t.name`.execute(db);
  return rows.rows;
}

/** The rows grouped by reconciler, in the rows' order, each with its deployment targets. */
function reconcilersOf(rows: readonly HostReconcilerRow[]): HostReconciler[] {
  const reconcilers = new Map<number, HostReconciler>();
  for (const row of rows) {
    let reconciler = reconcilers.get(row.reconciler_id);
    if (reconciler === undefined) {
      reconciler = hostReconcilerOf(row);
      reconcilers.set(row.reconciler_id, reconciler);
    }
    if (row.target !== null) reconciler.deploymentTargets.push(reconcilerTargetOf(row, row.target));
  }
  return [...reconcilers.values()];
}

/** The reconciler of a row, with no deployment target yet. */
function hostReconcilerOf(row: HostReconcilerRow): HostReconciler {
  return {
    reconciler: row.reconciler,
    type: row.type,
    manifestsEndpoint: row.endpoint,
    commit: row.commit,
    status: row.status,
    reportedStatus: row.reported_status,
    statusMessage: row.status_message,
    deployedAt: isoTime(row.observed_at),
    lastSeenAt: isoTime(row.last_seen_at),
    argocd: row.type === 'argocd' ? argoCdDetailsOf(row.details) : null,
    deploymentTargets: [],
  };
}

/** The Argo CD part of the stored details (schema/0025), as the normalizer wrote it; null when absent. */
function argoCdDetailsOf(details: unknown): ArgoCdDetails | null {
  const argocd = (details as { argocd?: Partial<ArgoCdDetails> } | null)?.argocd;
  if (typeof argocd?.sync !== 'string' || typeof argocd.health !== 'string') return null;
  return { sync: argocd.sync, health: argocd.health, operation: typeof argocd.operation === 'string' ? argocd.operation : null };
}

/** The deployment target of a row that has one: its names are then all there (the join found the target). */
function reconcilerTargetOf(row: HostReconcilerRow, target: string): HostReconcilerTarget {
  return {
    workspace: row.workspace!,
    application: row.application!,
    workload: row.workload!,
    deploymentTarget: target,
    environment: row.environment!,
    deployedVersion: row.deployed_version,
    desiredVersion: row.desired_version,
    desiredCommit: row.desired_commit,
  };
}
