// "Delivery": DORA metrics and fleet convergence over a window and a slice, aggregated from the
// rollout table (schema/0008, one row per rollout — a new version on a target — since 0010). The
// view Grafana reads, kalypso_delivery_rollout, passes the same columns through with names added
// (kalypso_delivery_rollout_history) and the same verdict for the current ones (kalypso_current_rollouts),
// so the API and the dashboard agree (the Grafana test compares them slice by slice). A current
// rollout's status and subscriber counts are judged now, as the rollout gate judges its commit
// (kalypso_current_rollouts), so that Delivery and the gate never give two verdicts; history-based
// numbers (convergence, lead times) stay as they were. Definitions: README "Delivery analytics".
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { HubDatabase } from '../database-schema.ts';
import { refreshRollouts } from '../rollout-refresh.ts';
import { type FleetSlice, type ReportContext, staleBefore } from './report-context.ts';

export interface DeliveryFilter extends FleetSlice {
  readonly since: Date;
  readonly until: Date;
  /** A rollout superseded within this many seconds of its assignment counts as a change failure (0: never). */
  readonly fixWindowSeconds: number;
  /** How many of the newest rollouts to list. */
  readonly limit: number;
}

export type RolloutStatus = 'succeeded' | 'failed' | 'superseded' | 'in_progress' | 'no_subscribers';

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
  /** Where its subscribers pull from: with `commit`, what the rollout gate asks about. */
  manifestsEndpoint: string;
  version: string;
  commit: string;
  buildTime: Date | null;
  assignedAt: Date;
  supersededAt: Date | null;
  status: RolloutStatus;
  /** Not superseded: status and subscriber counts are as of now, as the rollout gate has them. */
  current: boolean;
  /** A current rollout that had converged, and the hosts where it no longer succeeds (failing, stale, moved away). */
  regressedOn: string[];
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

export async function deliveryReport(db: Kysely<HubDatabase>, context: ReportContext, filter: DeliveryFilter): Promise<DeliveryReport> {
  // Read-your-writes: whatever any replica has written is in the rollout table before it is read.
  await refreshRollouts(db, { wait: true });
  // The current rollouts are judged now, beside the reads below (which count the recorded status;
  // the verdicts that differ are applied after): those of the slice, or all of them (a list of
  // every target would cost more than it saves).
  const sliced = [filter.environment, filter.workspace, filter.application, filter.workload, filter.deploymentTarget, filter.host].some(
    (name) => name !== undefined,
  );
  const targets = sliced ? sql`ARRAY(SELECT o.deployment_target_id FROM rollout o WHERE ${rolloutsIn('o', filter)} AND o.superseded_at IS NULL)` : sql`NULL`;
  // The rollout table itself, not the named view: the same columns, without joining five tables
  // for every rollout of the window (the slice is resolved to deployment target ids instead).
  // coalesce: a rollout not superseded has no superseded_after_seconds, and is no change failure for it.
  const changeFailure = sql`(o.first_failure_at IS NOT NULL OR coalesce(${filter.fixWindowSeconds}::float8 > 0 AND o.superseded_after_seconds <= ${filter.fixWindowSeconds}::float8, false))`;
  // Judged: ended one way or another. A rollout still under way has not yet succeeded or failed.
  const judged = sql`(o.converged_at IS NOT NULL OR o.first_failure_at IS NOT NULL OR o.superseded_at IS NOT NULL)`;
  // Deployments that landed: converged at some point (a later regression does not undo the deployment).
  const counts = sql`count(*) FILTER (WHERE o.subscribers > 0)::int AS rollouts,
                     count(*) FILTER (WHERE o.converged_at IS NOT NULL)::int AS converged,
                     count(*) FILTER (WHERE o.status = 'succeeded')::int AS succeeded,
                     count(*) FILTER (WHERE o.subscribers > 0 AND ${judged})::int AS judged,
                     count(*) FILTER (WHERE o.subscribers > 0 AND ${judged} AND ${changeFailure})::int AS change_failures`;

  // Five independent reads, on separate connections at once.
  const [live, overall, days, laggards, recent] = await Promise.all([
    sql<LiveRow>`SELECT l.* FROM kalypso_current_rollouts(${staleBefore(context)}::timestamptz, ${targets}) l`.execute(db),
    sql<OverallRow>`
      SELECT ${counts},
             count(*) FILTER (WHERE o.status = 'failed')::int AS failed,
             count(*) FILTER (WHERE o.status = 'superseded')::int AS superseded,
             count(*) FILTER (WHERE o.status = 'in_progress')::int AS in_progress,
             count(*) FILTER (WHERE o.status = 'no_subscribers')::int AS without_subscribers,
             count(*) FILTER (WHERE o.subscribers > 0 AND o.build_time IS NULL)::int AS without_build_time,
             count(*) FILTER (WHERE o.subscribers > 0 AND o.first_failure_at IS NOT NULL)::int AS with_failure_reports,
             count(*) FILTER (WHERE o.subscribers > 0 AND ${judged} AND ${changeFailure} AND o.first_failure_at IS NULL)::int AS superseded_within_fix_window,
             ${durationColumns('lead_first', sql`o.lead_time_first_host_seconds`)},
             ${durationColumns('lead_last', sql`o.lead_time_last_host_seconds`)},
             ${durationColumns('conv50', sql`o.convergence_50_seconds`)},
             ${durationColumns('conv90', sql`o.convergence_90_seconds`)},
             ${durationColumns('conv100', sql`o.convergence_100_seconds`)},
             ${durationColumns('restore', sql`o.restore_seconds`)}
        FROM rollout o
       WHERE ${rolloutsIn('o', filter)}`.execute(db),
    sql<DayRow>`
      SELECT to_char(o.assigned_day, 'YYYY-MM-DD') AS day, ${counts},
             percentile_cont(0.5) WITHIN GROUP (ORDER BY o.lead_time_last_host_seconds) FILTER (WHERE o.subscribers > 0) AS lead_time_median,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY o.convergence_100_seconds) FILTER (WHERE o.subscribers > 0) AS convergence_median
        FROM rollout o
       WHERE ${rolloutsIn('o', filter)}
       GROUP BY o.assigned_day
       ORDER BY o.assigned_day`.execute(db),
    sql<LaggardRow>`
      SELECT h.name AS host, x.lagged, x.not_converged, x.median_behind, x.max_behind
        FROM (SELECT l.host_id, count(*)::int AS lagged, count(*) FILTER (WHERE l.succeeded_at IS NULL)::int AS not_converged,
                     percentile_cont(0.5) WITHIN GROUP (ORDER BY l.behind_seconds) AS median_behind, max(l.behind_seconds) AS max_behind
                FROM rollout_laggard l
               WHERE ${rolloutsIn('l', filter)}
                 ${filter.host === undefined ? sql`` : sql`AND l.host_id IN (SELECT id FROM host WHERE name = ${filter.host})`}
               GROUP BY l.host_id) x
        JOIN host h ON h.id = x.host_id
       ORDER BY x.lagged DESC, x.not_converged DESC, x.median_behind DESC NULLS FIRST, h.name
       LIMIT ${LAGGING_HOSTS_LISTED}`.execute(db),
    newestRollouts(db, filter, sql`${changeFailure} AND ${judged}`),
  ]);

  const liveById = new Map(live.rows.map((row) => [Number(row.assignment_id), row]));
  const totals = overall.rows[0]!;
  // The current rollouts of the window whose verdict now differs from the recorded one move over.
  for (const row of live.rows) {
    if (row.status === row.recorded_status || row.assigned_at < filter.since || row.assigned_at >= filter.until) continue;
    totals[STATUS_COLUMN[row.recorded_status]] -= 1;
    totals[STATUS_COLUMN[row.status]] += 1;
  }
  // The hosts the listed current rollouts regressed on (converged, and not succeeding now).
  const regressedIds = recent
    .filter((row) => {
      const status = liveById.get(Number(row.rollout_id))?.status;
      return status !== undefined && status !== 'succeeded' && row.converged_at !== null;
    })
    .map((row) => row.rollout_id);
  const regressed =
    regressedIds.length === 0
      ? new Map<number, string[]>()
      : new Map(
          (
            await sql<{ assignment_id: number; hosts: string[] }>`
              SELECT * FROM kalypso_regressed_hosts(${staleBefore(context)}::timestamptz, ${regressedIds}::bigint[])`.execute(db)
          ).rows.map((row) => [Number(row.assignment_id), row.hosts]),
        );
  const windowDays = (filter.until.getTime() - filter.since.getTime()) / 86_400_000;
  return {
    window: { since: filter.since, until: filter.until, days: round(windowDays, 4) },
    fixWindowSeconds: filter.fixWindowSeconds,
    rollouts: {
      total: totals.rollouts,
      succeeded: totals.succeeded,
      failed: totals.failed,
      superseded: totals.superseded,
      inProgress: totals.in_progress,
      withoutSubscribers: totals.without_subscribers,
    },
    deploymentFrequency: { successfulRollouts: totals.converged, perDay: windowDays > 0 ? round(totals.converged / windowDays, 4) : 0 },
    leadTime: { firstHost: duration(totals, 'lead_first'), lastHost: duration(totals, 'lead_last'), withoutBuildTime: totals.without_build_time },
    convergence: { to50Percent: duration(totals, 'conv50'), to90Percent: duration(totals, 'conv90'), to100Percent: duration(totals, 'conv100') },
    changeFailureRate: {
      judged: totals.judged,
      failures: totals.change_failures,
      withFailureReports: totals.with_failure_reports,
      supersededWithinFixWindow: totals.superseded_within_fix_window,
      rate: rate(totals.change_failures, totals.judged),
    },
    timeToRestore: {
      ...duration(totals, 'restore'),
      failures: totals.with_failure_reports,
      notRestored: totals.with_failure_reports - totals.restore_count,
    },
    laggingHosts: laggards.rows.map((row) => ({
      host: row.host,
      lagged: row.lagged,
      notConverged: row.not_converged,
      medianBehindSeconds: seconds(row.median_behind),
      maxBehindSeconds: seconds(row.max_behind),
    })),
    trend: everyDay(filter, days.rows).map((row) => ({
      day: row.day,
      rollouts: row.rollouts,
      successful: row.converged,
      judged: row.judged,
      changeFailures: row.change_failures,
      changeFailureRate: rate(row.change_failures, row.judged),
      leadTimeMedianSeconds: seconds(row.lead_time_median),
      convergenceMedianSeconds: seconds(row.convergence_median),
    })),
    recentRollouts: recent.map((row) => {
      const now = liveById.get(Number(row.rollout_id));
      return {
      environment: row.environment,
      workspace: row.workspace,
      application: row.application,
      workload: row.workload,
      deploymentTarget: row.deployment_target,
      manifestsEndpoint: row.manifests_endpoint,
      version: row.version,
      commit: row.commit_id,
      buildTime: row.build_time,
      assignedAt: row.assigned_at,
      supersededAt: row.superseded_at,
      status: (now?.status ?? row.status) as RolloutStatus,
      current: row.superseded_at === null,
      regressedOn: regressed.get(Number(row.rollout_id)) ?? [],
      changeFailure: row.change_failure,
      subscribers: now?.subscribers ?? row.subscribers,
      succeeded: now?.succeeded ?? row.subscribers_succeeded,
      failed: now?.failed ?? row.subscribers_failed,
      leadTimeFirstHostSeconds: seconds(row.lead_time_first_host_seconds),
      leadTimeLastHostSeconds: seconds(row.lead_time_last_host_seconds),
      convergence50Seconds: seconds(row.convergence_50_seconds),
      convergence90Seconds: seconds(row.convergence_90_seconds),
      convergence100Seconds: seconds(row.convergence_100_seconds),
      restoreSeconds: seconds(row.restore_seconds),
      laggingHosts: row.lagging_hosts,
      };
    }),
  };
}

/** Days without rollouts as zeros, so that a trend is a continuous series (up to MAX_TREND_DAYS). */
function everyDay(filter: DeliveryFilter, rows: readonly DayRow[]): DayRow[] {
  const byDay = new Map(rows.map((row) => [row.day, row]));
  const first = Date.UTC(filter.since.getUTCFullYear(), filter.since.getUTCMonth(), filter.since.getUTCDate());
  const filled: DayRow[] = [];
  for (let day = first; day < filter.until.getTime() && filled.length <= MAX_TREND_DAYS; day += 86_400_000) {
    const name = new Date(day).toISOString().slice(0, 10);
    filled.push(
      byDay.get(name) ?? { day: name, rollouts: 0, converged: 0, succeeded: 0, judged: 0, change_failures: 0, lead_time_median: null, convergence_median: null },
    );
  }
  // A window longer than the cap lists the days that have rollouts only.
  return filled.length <= MAX_TREND_DAYS ? filled : rows.slice();
}

/**
 * The rollouts of the window and slice. Names resolve to deployment target ids; a host selects
 * the rollouts of the endpoints its reconcilers pull.
 */
function rolloutsIn(alias: 'o' | 'l', filter: DeliveryFilter): RawBuilder<boolean> {
  const column = (name: string) => sql.ref(`${alias}.${name}`);
  const conditions: RawBuilder<unknown>[] = [sql`${column('assigned_at')} >= ${filter.since}`, sql`${column('assigned_at')} < ${filter.until}`];
  const names: RawBuilder<unknown>[] = [];
  const add = (column: string, value: string | undefined) => {
    if (value !== undefined) names.push(sql`${sql.ref(`t.${column}`)} = ${value}`);
  };
  add('environment', filter.environment);
  add('workspace', filter.workspace);
  add('application', filter.application);
  add('workload', filter.workload);
  add('name', filter.deploymentTarget);
  if (names.length > 0) {
    conditions.push(sql`${column('deployment_target_id')} IN (SELECT t.id FROM deployment_target_named t WHERE ${sql.join(names, sql` AND `)})`);
  }
  if (filter.host !== undefined) {
    conditions.push(sql`${column('deployment_target_id')} IN (
      SELECT t.id FROM host h JOIN reconciler c ON c.host_id = h.id
        JOIN deployment_target t ON t.manifests_endpoint_id = c.manifests_endpoint_id
       WHERE h.name = ${filter.host})`);
  }
  return sql<boolean>`(${sql.join(conditions, sql` AND `)})`;
}

/**
 * The newest rollouts of the slice, named, with their history's verdict (the caller puts the current
 * ones' verdict of now over it: kalypso_delivery_rollout_history is kalypso_delivery_rollout without judging every
 * current rollout again). In two steps: the planner would otherwise name every rollout of the
 * window before keeping the newest few.
 */
async function newestRollouts(db: Kysely<HubDatabase>, filter: DeliveryFilter, changeFailure: RawBuilder<unknown>): Promise<RolloutRow[]> {
  if (filter.limit === 0) return [];
  const newest = await sql<{ id: number }>`
    SELECT o.assignment_id AS id FROM rollout o
     WHERE ${rolloutsIn('o', filter)} AND o.subscribers > 0
     ORDER BY o.assigned_at DESC LIMIT ${filter.limit}`.execute(db);
  if (newest.rows.length === 0) return [];
  const rows = await sql<RolloutRow>`
    SELECT r.*, ${changeFailure} AS change_failure
      FROM kalypso_delivery_rollout_history r
      JOIN rollout o ON o.assignment_id = r.rollout_id
     WHERE r.rollout_id = ANY(${newest.rows.map((row) => row.id)}::bigint[])
     ORDER BY r.assigned_at DESC, r.environment_order, r.workspace, r.application, r.workload, r.deployment_target`.execute(db);
  return rows.rows;
}

/** Count, median and 90th percentile of a duration; one sort serves both percentiles. */
function durationColumns(name: DurationName, column: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`count(${column}) FILTER (WHERE o.subscribers > 0)::int AS ${sql.raw(`${name}_count`)},
             percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY ${column}) FILTER (WHERE o.subscribers > 0) AS ${sql.raw(`${name}_percentiles`)}`;
}

type DurationName = 'lead_first' | 'lead_last' | 'conv50' | 'conv90' | 'conv100' | 'restore';

interface LiveRow {
  assignment_id: number;
  subscribers: number;
  succeeded: number;
  failed: number;
  in_progress: number;
  stale: number;
  status: RolloutStatus;
  /** The status the rollout table holds, from history. */
  recorded_status: RolloutStatus;
  assigned_at: Date;
}

/** The count of each status in the overall row. */
const STATUS_COLUMN = {
  succeeded: 'succeeded',
  failed: 'failed',
  superseded: 'superseded',
  in_progress: 'in_progress',
  no_subscribers: 'without_subscribers',
} as const satisfies Record<RolloutStatus, keyof OverallRow>;

interface Counts {
  rollouts: number;
  converged: number;
  succeeded: number;
  judged: number;
  change_failures: number;
}

type OverallRow = Counts & {
  failed: number;
  superseded: number;
  in_progress: number;
  without_subscribers: number;
  without_build_time: number;
  with_failure_reports: number;
  superseded_within_fix_window: number;
} & { [K in `${DurationName}_count`]: number } & { [K in `${DurationName}_percentiles`]: (number | null)[] | null };

interface LaggardRow {
  host: string;
  lagged: number;
  not_converged: number;
  median_behind: number | null;
  max_behind: number | null;
}

interface DayRow extends Counts {
  day: string;
  lead_time_median: number | null;
  convergence_median: number | null;
}

interface RolloutRow {
  rollout_id: number;
  converged_at: Date | null;
  environment: string;
  workspace: string;
  application: string;
  workload: string;
  deployment_target: string;
  manifests_endpoint: string;
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
  lead_time_first_host_seconds: number | null;
  lead_time_last_host_seconds: number | null;
  convergence_50_seconds: number | null;
  convergence_90_seconds: number | null;
  convergence_100_seconds: number | null;
  restore_seconds: number | null;
  lagging_hosts: string[];
}

function duration(row: OverallRow, name: DurationName): DurationSummary {
  const [median, p90] = row[`${name}_percentiles`] ?? [null, null];
  return { count: row[`${name}_count`], medianSeconds: seconds(median ?? null), p90Seconds: seconds(p90 ?? null) };
}

function rate(part: number, whole: number): number | null {
  return whole > 0 ? round(part / whole, 4) : null;
}

/** Seconds to the millisecond. */
function seconds(value: number | null): number | null {
  return value === null ? null : round(value, 3);
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
