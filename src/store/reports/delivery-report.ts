// "Delivery": DORA metrics and fleet convergence over a window and a slice. Every number is a column
// of the SQL functions kalypso_delivery_totals, _outcomes, _trend, _laggards and _rollouts
// (schema/current/functions/), which Grafana's Delivery dashboard calls too: the rules live there,
// once. This module asks them, rounds, and shapes the answer. Definitions: docs/delivery-analytics.md.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DeliveryReport, DeliveryRollout, DeliveryTrendDay, DurationSummary, LaggingHost } from '../../contract/answer-types.ts';
import type { HubDatabase } from '../database-schema.ts';
import { summariesCurrent } from '../summary-refresh.ts';
import { type FleetSlice, isoTime, isoTimeOrNull, type ReportContext, staleBefore } from './report-context.ts';

export interface DeliveryFilter extends FleetSlice {
  readonly since: Date;
  readonly until: Date;
  /** A rollout superseded within this many seconds of its assignment counts as a change failure (0: never). */
  readonly fixWindowSeconds: number;
  /** How many of the newest rollouts to list. */
  readonly limit: number;
}

type RolloutStatus = DeliveryRollout['status'];

const LAGGING_HOSTS_LISTED = 20;

export async function deliveryReport(db: Kysely<HubDatabase>, context: ReportContext, filter: DeliveryFilter): Promise<DeliveryReport> {
  // Read-your-writes: the rollouts, then the status counts kept on write (schema/0012) that a
  // current rollout's verdict reads (schema/0013), folded in first when anything is queued.
  await summariesCurrent(db, context.asOf, { rollouts: true });
  const { totals, outcomes, days, laggards, rollouts } = await readDeliveryRows(db, context, filter);
  return {
    ...deliveryTotals(filter, totals.rows[0]!, outcomes.rows[0]!),
    laggingHosts: laggards.rows.map(laggingHostOf),
    trend: days.rows.map(trendDayOf),
    recentRollouts: rollouts.rows.map(deliveryRolloutOf),
  };
}

/** One call of each kalypso_delivery_* function, over the same window and slice. */
async function readDeliveryRows(db: Kysely<HubDatabase>, context: ReportContext, filter: DeliveryFilter) {
  const scope = deliveryScope(filter);
  const fixWindow = sql`fix_window_seconds => ${filter.fixWindowSeconds}::float8`;
  const cutoff = sql`stale_before => ${staleBefore(context)}::timestamptz`;
  // Independent reads, on separate connections at once.
  const [totals, outcomes, days, laggards, rollouts] = await Promise.all([
    sql<TotalsRow>`SELECT * FROM kalypso_delivery_totals(${scope}, ${fixWindow})`.execute(db),
    sql<OutcomesRow>`SELECT * FROM kalypso_delivery_outcomes(${scope}, ${cutoff})`.execute(db),
    sql<TrendRow>`SELECT to_char(d.day, 'YYYY-MM-DD') AS day, d.rollouts, d.successful_rollouts, d.judged, d.change_failures,
                         d.change_failure_rate, d.lead_time_last_host_median, d.convergence_100_median
                    FROM kalypso_delivery_trend(${scope}, ${fixWindow}) d`.execute(db),
    sql<LaggardRow>`SELECT * FROM kalypso_delivery_laggards(${scope}, max_rows => ${LAGGING_HOSTS_LISTED})`.execute(db),
    filter.limit === 0
      ? { rows: [] }
      : sql<RolloutRow>`SELECT * FROM kalypso_delivery_rollouts(${scope}, ${fixWindow}, ${cutoff}, max_rows => ${filter.limit})`.execute(db),
  ]);
  return { totals, outcomes, days, laggards, rollouts };
}

/** The report's headline numbers: everything but its lists. */
function deliveryTotals(
  filter: DeliveryFilter,
  t: TotalsRow,
  o: OutcomesRow,
): Omit<DeliveryReport, 'laggingHosts' | 'trend' | 'recentRollouts'> {
  return {
    window: { since: isoTime(filter.since), until: isoTime(filter.until), days: round(t.window_days, 4) },
    fixWindowSeconds: filter.fixWindowSeconds,
    rollouts: {
      total: o.rollouts,
      succeeded: o.succeeded,
      failed: o.failed,
      superseded: o.superseded,
      inProgress: o.in_progress,
      withoutSubscribers: o.without_subscribers,
    },
    deploymentFrequency: { successfulRollouts: t.successful_rollouts, perDay: round(t.deployments_per_day, 4) },
    leadTime: {
      firstHost: durationSummary(t.lead_time_first_host_count, t.lead_time_first_host_median, t.lead_time_first_host_p90),
      lastHost: durationSummary(t.lead_time_last_host_count, t.lead_time_last_host_median, t.lead_time_last_host_p90),
      withoutBuildTime: t.without_build_time,
    },
    convergence: {
      to50Percent: durationSummary(t.convergence_50_count, t.convergence_50_median, t.convergence_50_p90),
      to90Percent: durationSummary(t.convergence_90_count, t.convergence_90_median, t.convergence_90_p90),
      to100Percent: durationSummary(t.convergence_100_count, t.convergence_100_median, t.convergence_100_p90),
    },
    changeFailureRate: {
      judged: t.judged,
      failures: t.change_failures,
      withFailureReports: t.with_failure_reports,
      supersededWithinFixWindow: t.superseded_within_fix_window,
      rate: ratio(t.change_failure_rate),
    },
    timeToRestore: { ...durationSummary(t.restore_count, t.restore_median, t.restore_p90), failures: t.with_failure_reports, notRestored: t.not_restored },
  };
}

function durationSummary(count: number, median: number | null, p90: number | null): DurationSummary {
  return { count, medianSeconds: seconds(median), p90Seconds: seconds(p90) };
}

function laggingHostOf(row: LaggardRow): LaggingHost {
  return {
    host: row.host,
    lagged: row.lagged,
    notConverged: row.not_converged,
    medianBehindSeconds: seconds(row.median_behind_seconds),
    maxBehindSeconds: seconds(row.max_behind_seconds),
  };
}

function trendDayOf(row: TrendRow): DeliveryTrendDay {
  return {
    day: row.day,
    rollouts: row.rollouts,
    successful: row.successful_rollouts,
    judged: row.judged,
    changeFailures: row.change_failures,
    changeFailureRate: ratio(row.change_failure_rate),
    leadTimeMedianSeconds: seconds(row.lead_time_last_host_median),
    convergenceMedianSeconds: seconds(row.convergence_100_median),
  };
}

function deliveryRolloutOf(row: RolloutRow): DeliveryRollout {
  return {
    environment: row.environment,
    workspace: row.workspace,
    application: row.application,
    workload: row.workload,
    deploymentTarget: row.deployment_target,
    manifestsEndpoint: row.manifests_endpoint,
    version: row.version,
    commit: row.commit_id,
    buildTime: isoTimeOrNull(row.build_time),
    assignedAt: isoTime(row.assigned_at),
    supersededAt: isoTimeOrNull(row.superseded_at),
    status: row.status,
    current: row.current,
    regressedOn: row.regressed_on,
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
  };
}

/** The arguments every kalypso_delivery_* function begins with: the window, then the slice's lists (NULL: any). */
function deliveryScope(filter: DeliveryFilter): RawBuilder<unknown> {
  const list = (name: string | undefined) => (name === undefined ? sql`NULL::text[]` : sql`ARRAY[${name}]::text[]`);
  return sql`${filter.since}::timestamptz, ${filter.until}::timestamptz, ${list(filter.environment)}, ${list(filter.workspace)},
             ${list(filter.application)}, ${list(filter.workload)}, ${list(filter.deploymentTarget)}, ${list(filter.host)}`;
}

interface TotalsRow {
  window_days: number;
  successful_rollouts: number;
  deployments_per_day: number;
  lead_time_first_host_count: number;
  lead_time_first_host_median: number | null;
  lead_time_first_host_p90: number | null;
  lead_time_last_host_count: number;
  lead_time_last_host_median: number | null;
  lead_time_last_host_p90: number | null;
  without_build_time: number;
  convergence_50_count: number;
  convergence_50_median: number | null;
  convergence_50_p90: number | null;
  convergence_90_count: number;
  convergence_90_median: number | null;
  convergence_90_p90: number | null;
  convergence_100_count: number;
  convergence_100_median: number | null;
  convergence_100_p90: number | null;
  judged: number;
  change_failures: number;
  with_failure_reports: number;
  superseded_within_fix_window: number;
  change_failure_rate: number | null;
  restore_count: number;
  restore_median: number | null;
  restore_p90: number | null;
  not_restored: number;
}

interface OutcomesRow {
  rollouts: number;
  succeeded: number;
  failed: number;
  superseded: number;
  in_progress: number;
  without_subscribers: number;
}

interface TrendRow {
  day: string;
  rollouts: number;
  successful_rollouts: number;
  judged: number;
  change_failures: number;
  change_failure_rate: number | null;
  lead_time_last_host_median: number | null;
  convergence_100_median: number | null;
}

interface LaggardRow {
  host: string;
  lagged: number;
  not_converged: number;
  median_behind_seconds: number | null;
  max_behind_seconds: number | null;
}

interface RolloutRow {
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
  current: boolean;
  status: RolloutStatus;
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
  regressed_on: string[];
}

/** A rate to four decimals. */
function ratio(value: number | null): number | null {
  return value === null ? null : round(value, 4);
}

/** Seconds to the millisecond. */
function seconds(value: number | null): number | null {
  return value === null ? null : round(value, 3);
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
