// "Delivery": DORA metrics and fleet convergence over a window and a slice, aggregated from the
// per-rollout view kalypso_delivery_rollout (schema/0008) — the same rows Grafana reads, so the API
// and the dashboard cannot disagree. Definitions: README "Delivery analytics".
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { HubDatabase } from '../database-schema.ts';
import { refreshRollouts } from '../rollout-refresh.ts';

export interface DeliveryFilter {
  readonly since: Date;
  readonly until: Date;
  readonly environment?: string | undefined;
  readonly workspace?: string | undefined;
  readonly application?: string | undefined;
  readonly workload?: string | undefined;
  readonly deploymentTarget?: string | undefined;
  readonly host?: string | undefined;
  /** A rollout superseded within this many seconds of its assignment counts as a change failure (0: never). */
  readonly fixWindowSeconds: number;
  /** How many of the newest rollouts to list. */
  readonly limit: number;
}

export type RolloutStatus = 'succeeded' | 'failed' | 'superseded' | 'in_progress';

/** Median and 90th percentile (interpolated) of a duration over the rollouts that have it. */
export interface DurationSummary {
  count: number;
  medianSeconds: number | null;
  p90Seconds: number | null;
}

export interface DeliveryTrendDay {
  day: string;
  rollouts: number;
  successful: number;
  judged: number;
  changeFailures: number;
  changeFailureRate: number | null;
  leadTimeMedianSeconds: number | null;
  convergenceMedianSeconds: number | null;
}

export interface LaggingHost {
  host: string;
  /** Rollouts in which the host was among the laggards. */
  lagged: number;
  /** Of those, the rollouts it has not applied (yet, or ever). */
  notConverged: number;
  /** How far behind the 50 % point it succeeded when it did. */
  medianBehindSeconds: number | null;
  maxBehindSeconds: number | null;
}

export interface DeliveryRollout {
  environment: string;
  workspace: string;
  application: string;
  workload: string;
  deploymentTarget: string;
  version: string;
  commit: string;
  buildTime: Date | null;
  assignedAt: Date;
  supersededAt: Date | null;
  status: RolloutStatus;
  changeFailure: boolean;
  subscribers: number;
  succeeded: number;
  failed: number;
  leadTimeFirstHostSeconds: number | null;
  leadTimeLastHostSeconds: number | null;
  convergence50Seconds: number | null;
  convergence90Seconds: number | null;
  convergence100Seconds: number | null;
  restoreSeconds: number | null;
  laggingHosts: string[];
}

export interface DeliveryReport {
  window: { since: Date; until: Date; days: number };
  fixWindowSeconds: number;
  rollouts: { total: number; succeeded: number; failed: number; superseded: number; inProgress: number; withoutSubscribers: number };
  deploymentFrequency: { successfulRollouts: number; perDay: number };
  leadTime: { firstHost: DurationSummary; lastHost: DurationSummary; withoutBuildTime: number };
  convergence: { to50Percent: DurationSummary; to90Percent: DurationSummary; to100Percent: DurationSummary };
  changeFailureRate: { judged: number; failures: number; withFailureReports: number; supersededWithinFixWindow: number; rate: number | null };
  timeToRestore: DurationSummary & { failures: number; notRestored: number };
  laggingHosts: LaggingHost[];
  trend: DeliveryTrendDay[];
  recentRollouts: DeliveryRollout[];
}

const LAGGING_HOSTS_LISTED = 20;
const MAX_TREND_DAYS = 400;

export async function deliveryReport(db: Kysely<HubDatabase>, filter: DeliveryFilter): Promise<DeliveryReport> {
  // Read-your-writes: whatever any replica has written is in the rollout table before it is read.
  await refreshRollouts(db, { wait: true });
  const where = rolloutsIn(filter);
  const changeFailure = sql`(r.had_failure OR (${filter.fixWindowSeconds}::float8 > 0 AND r.superseded_after_seconds <= ${filter.fixWindowSeconds}::float8))`;
  // Judged: ended one way or another. A rollout still under way has not yet succeeded or failed.
  const judged = sql`(r.converged OR r.had_failure OR r.superseded_at IS NOT NULL)`;

  const summaries = await sql<SummaryRow>`
    WITH r AS (
      SELECT r.*, ${changeFailure} AS change_failure, ${judged} AS judged,
             to_char(r.assigned_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day
        FROM kalypso_delivery_rollout r
       WHERE ${where}
    )
    SELECT grouping(day) = 1 AS overall, day,
           count(*) FILTER (WHERE subscribers > 0)::int AS rollouts,
           count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
           count(*) FILTER (WHERE status = 'failed')::int AS failed,
           count(*) FILTER (WHERE status = 'superseded')::int AS superseded,
           count(*) FILTER (WHERE status = 'in_progress')::int AS in_progress,
           count(*) FILTER (WHERE subscribers = 0)::int AS without_subscribers,
           count(*) FILTER (WHERE subscribers > 0 AND build_time IS NULL)::int AS without_build_time,
           ${durationColumns('lead_first', sql`lead_time_first_host_seconds`)},
           ${durationColumns('lead_last', sql`lead_time_last_host_seconds`)},
           ${durationColumns('conv50', sql`convergence_50_seconds`)},
           ${durationColumns('conv90', sql`convergence_90_seconds`)},
           ${durationColumns('conv100', sql`convergence_100_seconds`)},
           ${durationColumns('restore', sql`restore_seconds`)},
           count(*) FILTER (WHERE subscribers > 0 AND judged)::int AS judged,
           count(*) FILTER (WHERE subscribers > 0 AND judged AND change_failure)::int AS change_failures,
           count(*) FILTER (WHERE subscribers > 0 AND had_failure)::int AS with_failure_reports,
           count(*) FILTER (WHERE subscribers > 0 AND judged AND change_failure AND NOT had_failure)::int AS superseded_within_fix_window
      FROM r
     GROUP BY GROUPING SETS ((), (day))
     ORDER BY day NULLS FIRST`.execute(db);

  const laggards = await sql<{ host: string; lagged: number; not_converged: number; median_behind: number | null; max_behind: number | null }>`
    SELECT l.host, count(*)::int AS lagged, count(*) FILTER (WHERE NOT l.converged)::int AS not_converged,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY l.behind_seconds) AS median_behind, max(l.behind_seconds)::float8 AS max_behind
      FROM kalypso_delivery_laggard l
     WHERE ${namesMatch('l', filter)} AND l.assigned_at >= ${filter.since} AND l.assigned_at < ${filter.until}
       ${filter.host === undefined ? sql`` : sql`AND l.host = ${filter.host}`}
     GROUP BY l.host
     ORDER BY lagged DESC, not_converged DESC, median_behind DESC NULLS FIRST, l.host
     LIMIT ${LAGGING_HOSTS_LISTED}`.execute(db);

  const recent = await sql<RolloutRow>`
    SELECT r.*, ${changeFailure} AND ${judged} AS change_failure
      FROM kalypso_delivery_rollout r
     WHERE ${where} AND r.subscribers > 0
     ORDER BY r.assigned_at DESC, r.environment_order, r.workspace, r.application, r.workload, r.deployment_target
     LIMIT ${filter.limit}`.execute(db);

  // The empty grouping set yields its row even when no rollout matches.
  const overall = summaries.rows.find((row) => row.overall)!;
  const days = (filter.until.getTime() - filter.since.getTime()) / 86_400_000;
  return {
    window: { since: filter.since, until: filter.until, days: round(days, 4) },
    fixWindowSeconds: filter.fixWindowSeconds,
    rollouts: {
      total: overall.rollouts,
      succeeded: overall.succeeded,
      failed: overall.failed,
      superseded: overall.superseded,
      inProgress: overall.in_progress,
      withoutSubscribers: overall.without_subscribers,
    },
    deploymentFrequency: { successfulRollouts: overall.succeeded, perDay: days > 0 ? round(overall.succeeded / days, 4) : 0 },
    leadTime: { firstHost: duration(overall, 'lead_first'), lastHost: duration(overall, 'lead_last'), withoutBuildTime: overall.without_build_time },
    convergence: { to50Percent: duration(overall, 'conv50'), to90Percent: duration(overall, 'conv90'), to100Percent: duration(overall, 'conv100') },
    changeFailureRate: {
      judged: overall.judged,
      failures: overall.change_failures,
      withFailureReports: overall.with_failure_reports,
      supersededWithinFixWindow: overall.superseded_within_fix_window,
      rate: overall.judged > 0 ? round(overall.change_failures / overall.judged, 4) : null,
    },
    timeToRestore: {
      ...duration(overall, 'restore'),
      failures: overall.with_failure_reports,
      notRestored: overall.with_failure_reports - overall.restore_count,
    },
    laggingHosts: laggards.rows.map((row) => ({
      host: row.host,
      lagged: row.lagged,
      notConverged: row.not_converged,
      medianBehindSeconds: seconds(row.median_behind),
      maxBehindSeconds: seconds(row.max_behind),
    })),
    trend: everyDay(filter, summaries.rows.filter((row) => !row.overall)).map((row) => ({
        day: row.day!,
        rollouts: row.rollouts,
        successful: row.succeeded,
        judged: row.judged,
        changeFailures: row.change_failures,
        changeFailureRate: row.judged > 0 ? round(row.change_failures / row.judged, 4) : null,
        leadTimeMedianSeconds: seconds(row.lead_last_median),
        convergenceMedianSeconds: seconds(row.conv100_median),
      })),
    recentRollouts: recent.rows.map((row) => ({
      environment: row.environment,
      workspace: row.workspace,
      application: row.application,
      workload: row.workload,
      deploymentTarget: row.deployment_target,
      version: row.version,
      commit: row.commit_id,
      buildTime: row.build_time,
      assignedAt: row.assigned_at,
      supersededAt: row.superseded_at,
      status: row.status as RolloutStatus,
      changeFailure: row.change_failure,
      subscribers: row.subscribers,
      succeeded: row.subscribers_succeeded,
      failed: row.subscribers_failed,
      leadTimeFirstHostSeconds: seconds(row.lead_time_first_host_seconds),
      leadTimeLastHostSeconds: seconds(row.lead_time_last_host_seconds),
      convergence50Seconds: seconds(row.convergence_50_seconds),
      convergence90Seconds: seconds(row.convergence_90_seconds),
      convergence100Seconds: seconds(row.convergence_100_seconds),
      restoreSeconds: seconds(row.restore_seconds),
      laggingHosts: row.lagging_hosts,
    })),
  };
}

/** Days without rollouts as zeros, so that a trend is a continuous series (up to MAX_TREND_DAYS). */
function everyDay(filter: DeliveryFilter, rows: readonly SummaryRow[]): SummaryRow[] {
  const byDay = new Map(rows.map((row) => [row.day!, row]));
  const first = Date.UTC(filter.since.getUTCFullYear(), filter.since.getUTCMonth(), filter.since.getUTCDate());
  const filled: SummaryRow[] = [];
  for (let day = first; day < filter.until.getTime() && filled.length < MAX_TREND_DAYS; day += 86_400_000) {
    const name = new Date(day).toISOString().slice(0, 10);
    filled.push(byDay.get(name) ?? emptyDay(name));
  }
  // Beyond the cap, the days that have rollouts are listed as they are.
  return filled.length < MAX_TREND_DAYS ? filled : rows.slice();
}

function emptyDay(day: string): SummaryRow {
  const row: Record<string, unknown> = { overall: false, day };
  for (const name of ['rollouts', 'succeeded', 'judged', 'change_failures', 'lead_last_median', 'conv100_median']) {
    row[name] = name.endsWith('_median') ? null : 0;
  }
  return row as SummaryRow;
}

/** The rollouts of the window and slice; a host selects the rollouts of the endpoints its reconcilers pull. */
function rolloutsIn(filter: DeliveryFilter): RawBuilder<boolean> {
  const host =
    filter.host === undefined
      ? sql`true`
      : sql`r.manifests_endpoint IN (SELECT me.endpoint FROM host h JOIN reconciler c ON c.host_id = h.id
                                       JOIN manifests_endpoint me ON me.id = c.manifests_endpoint_id WHERE h.name = ${filter.host})`;
  return sql<boolean>`r.assigned_at >= ${filter.since} AND r.assigned_at < ${filter.until} AND ${namesMatch('r', filter)} AND ${host}`;
}

function namesMatch(alias: string, filter: DeliveryFilter): RawBuilder<boolean> {
  const conditions: RawBuilder<unknown>[] = [sql`true`];
  const add = (column: string, value: string | undefined) => {
    if (value !== undefined) conditions.push(sql`${sql.ref(`${alias}.${column}`)} = ${value}`);
  };
  add('environment', filter.environment);
  add('workspace', filter.workspace);
  add('application', filter.application);
  add('workload', filter.workload);
  add('deployment_target', filter.deploymentTarget);
  return sql<boolean>`(${sql.join(conditions, sql` AND `)})`;
}

function durationColumns(name: string, column: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`count(${column}) FILTER (WHERE subscribers > 0)::int AS ${sql.raw(`${name}_count`)},
             percentile_cont(0.5) WITHIN GROUP (ORDER BY ${column}) FILTER (WHERE subscribers > 0) AS ${sql.raw(`${name}_median`)},
             percentile_cont(0.9) WITHIN GROUP (ORDER BY ${column}) FILTER (WHERE subscribers > 0) AS ${sql.raw(`${name}_p90`)}`;
}

type DurationName = 'lead_first' | 'lead_last' | 'conv50' | 'conv90' | 'conv100' | 'restore';

type SummaryRow = {
  overall: boolean;
  day: string | null;
  rollouts: number;
  succeeded: number;
  failed: number;
  superseded: number;
  in_progress: number;
  without_subscribers: number;
  without_build_time: number;
  judged: number;
  change_failures: number;
  with_failure_reports: number;
  superseded_within_fix_window: number;
} & { [K in `${DurationName}_count`]: number } & { [K in `${DurationName}_median` | `${DurationName}_p90`]: number | null };

interface RolloutRow {
  environment: string;
  workspace: string;
  application: string;
  workload: string;
  deployment_target: string;
  version: string;
  commit_id: string;
  build_time: Date | null;
  assigned_at: Date;
  superseded_at: Date | null;
  status: string;
  change_failure: boolean;
  subscribers: number;
  subscribers_succeeded: number;
  subscribers_failed: number;
  lead_time_first_host_seconds: number | string | null;
  lead_time_last_host_seconds: number | string | null;
  convergence_50_seconds: number | string | null;
  convergence_90_seconds: number | string | null;
  convergence_100_seconds: number | string | null;
  restore_seconds: number | string | null;
  lagging_hosts: string[];
}

function duration(row: SummaryRow, name: DurationName): DurationSummary {
  return { count: row[`${name}_count`], medianSeconds: seconds(row[`${name}_median`]), p90Seconds: seconds(row[`${name}_p90`]) };
}

/** Seconds to the millisecond; extract(epoch …) arrives as numeric text. */
function seconds(value: number | string | null): number | null {
  return value === null ? null : round(Number(value), 3);
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
