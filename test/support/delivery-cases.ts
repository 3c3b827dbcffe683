// The delivery fleet's numbers (test/support/delivery-fleet.ts), worked out by hand for windows,
// slices and fix windows: one table, asserted through both readers of the delivery definitions —
// GET /api/v1/metrics/delivery (test/api/delivery-metrics.test.ts) and the Grafana dashboard's
// panels run as kalypso_reader (test/grafana/delivery-dashboard.test.ts). A number that one of them
// cannot show (no panel counts rollouts by status; Grafana has no workload variable) is asserted
// through the other only.
//
// Per rollout (seconds; from delivery-fleet.ts):
//
//  rollout  assigned  lead first  lead last  conv 50  conv 90  conv 100  restore  superseded after  status now
//  R1       60        3900        7200       600      3600     3600      -        180 min           succeeded
//  R2       240       3900        -          -        -        -         4800     40 min            failed (failure reports)
//  R3       280       780         3600       300      3000     3000      -        1280 min          succeeded
//  W1       360       3660        7200       300      540      3600      -        -                 succeeded
//  D1       200       1320        1800       120      600      600       -        1300 min          succeeded
//  Q1       300       (no subscribers)
//  R4       1560      7800        14400      900      7200     7200      6900     -                 succeeded (a failure report)
//  D2       1500      3900        -          300      -        -         -        -                 in progress
//
// Medians and 90th percentiles interpolate (percentile_cont): of a, b the median is (a + b) / 2 and
// the 90th percentile a + 0.9 (b − a); of n sorted values the p-quantile sits at position p (n − 1).
// The report's own shapes (GET /metrics/delivery answers them as JSON: no dates among these).
import type { DeliveryTrendDay as TrendDay, DurationSummary as Summary, LaggingHost as Laggard } from '../../src/contract/answer-types.ts';
import { deliveryAt } from './delivery-fleet.ts';

/** What a window, slice and fix window give; absent: not asserted in that case. */
export interface DeliveryNumbers {
  /** By status, a current rollout as the rollout gate judges it now (no panel shows these). */
  rollouts?: { total: number; succeeded: number; failed: number; superseded: number; inProgress: number; withoutSubscribers: number };
  deploymentFrequency: { successfulRollouts: number; perDay: number };
  leadTime: { firstHost: Summary; lastHost: Summary; withoutBuildTime: number };
  convergence: { to50Percent: Summary; to90Percent: Summary; to100Percent: Summary };
  changeFailureRate: { judged: number; failures: number; withFailureReports: number; supersededWithinFixWindow: number; rate: number | null };
  timeToRestore: Summary & { failures: number; notRestored: number };
  laggingHosts: Laggard[];
  trend: TrendDay[];
  /** The listed rollouts, newest first: `environment/workload version status[ change failure]`. */
  recentRollouts: string[];
}

export interface DeliveryCase {
  readonly name: string;
  readonly environment?: string;
  readonly workspace?: string;
  readonly application?: string;
  readonly workload?: string;
  readonly deploymentTarget?: string;
  readonly host?: string;
  /** Minutes after 2026-11-10T00:00Z (default 0 and 2,880: two days). */
  readonly sinceMinute?: number;
  readonly untilMinute?: number;
  /** Default 3,600 (the API's default and the dashboard's). */
  readonly fixWindowSeconds?: number;
  readonly expected: DeliveryNumbers;
}

const summary = (count: number, medianSeconds: number | null, p90Seconds: number | null): Summary => ({ count, medianSeconds, p90Seconds });
const NONE = summary(0, null, null);
const day = (
  date: string,
  rollouts: number,
  successful: number,
  judged: number,
  changeFailures: number,
  changeFailureRate: number | null,
  leadTimeMedianSeconds: number | null,
  convergenceMedianSeconds: number | null,
): TrendDay => ({ day: date, rollouts, successful, judged, changeFailures, changeFailureRate, leadTimeMedianSeconds, convergenceMedianSeconds });
const EMPTY_DAY_2 = day('2026-11-11', 0, 0, 0, 0, null, null, null);

// The whole fleet over 2026-11-10..12, fix window one hour.
const WHOLE: DeliveryNumbers = {
  rollouts: { total: 7, succeeded: 5, failed: 1, superseded: 0, inProgress: 1, withoutSubscribers: 1 },
  // R1 R3 W1 D1 R4 converged, in two days.
  deploymentFrequency: { successfulRollouts: 5, perDay: 2.5 },
  // First host 780 1320 3660 3900 3900 3900 7800; last host 1800 3600 7200 7200 14400.
  leadTime: { firstHost: summary(7, 3900, 5460), lastHost: summary(5, 7200, 11520), withoutBuildTime: 0 },
  // 50 %: 120 300 300 300 600 900; 90 %: 540 600 3000 3600 7200; 100 %: 600 3000 3600 3600 7200.
  convergence: { to50Percent: summary(6, 300, 750), to90Percent: summary(5, 3000, 5760), to100Percent: summary(5, 3600, 5760) },
  // Judged: all but D2 (under way). Failures: R2 and R4 had failure reports; none superseded within an hour.
  changeFailureRate: { judged: 6, failures: 2, withFailureReports: 2, supersededWithinFixWindow: 0, rate: 0.3333 },
  // R2: 250 → R3 converged at 330; R4: 1565 → itself converged at 1680.
  timeToRestore: { ...summary(2, 5850, 6690), failures: 2, notRestored: 0 },
  // prod-4 behind 3000 (R1), 2700 (R3), 6300 (R4) and not converged in R2; dev-2 480 (D1), not in D2.
  laggingHosts: [
    { host: 'prod-4', lagged: 4, notConverged: 1, medianBehindSeconds: 3000, maxBehindSeconds: 6300 },
    { host: 'dev-2', lagged: 2, notConverged: 1, medianBehindSeconds: 480, maxBehindSeconds: 480 },
    { host: 'web-10', lagged: 1, notConverged: 0, medianBehindSeconds: 3300, maxBehindSeconds: 3300 },
  ],
  // Day 1: R1 R2 R3 W1 D1, lead last 1800 3600 7200 7200, conv 600 3000 3600 3600; day 2: R4 D2.
  trend: [day('2026-11-10', 5, 4, 5, 1, 0.2, 5400, 3300), day('2026-11-11', 2, 1, 1, 1, 1, 14400, 7200)],
  recentRollouts: [
    'prod/cart 1.2 succeeded change failure',
    'dev/cart 1.2 in_progress',
    'prod/web 3.0 succeeded',
    'prod/cart 1.1.1 succeeded',
    'prod/cart 1.1 failed change failure',
    'dev/cart 1.1 succeeded',
    'prod/cart 1.0 succeeded',
  ],
};

// dev/cart/edge: D1 and D2.
const DEV: DeliveryNumbers = {
  rollouts: { total: 2, succeeded: 1, failed: 0, superseded: 0, inProgress: 1, withoutSubscribers: 0 },
  deploymentFrequency: { successfulRollouts: 1, perDay: 0.5 },
  // First host 1320 3900: median 2610, p90 1320 + 0.9 · 2580.
  leadTime: { firstHost: summary(2, 2610, 3642), lastHost: summary(1, 1800, 1800), withoutBuildTime: 0 },
  // 50 %: 120 300.
  convergence: { to50Percent: summary(2, 210, 282), to90Percent: summary(1, 600, 600), to100Percent: summary(1, 600, 600) },
  changeFailureRate: { judged: 1, failures: 0, withFailureReports: 0, supersededWithinFixWindow: 0, rate: 0 },
  timeToRestore: { ...NONE, failures: 0, notRestored: 0 },
  laggingHosts: [{ host: 'dev-2', lagged: 2, notConverged: 1, medianBehindSeconds: 480, maxBehindSeconds: 480 }],
  trend: [day('2026-11-10', 1, 1, 1, 0, 0, 1800, 600), day('2026-11-11', 1, 0, 0, 0, null, null, null)],
  recentRollouts: ['dev/cart 1.2 in_progress', 'dev/cart 1.1 succeeded'],
};

// prod/web/main: W1 alone.
const WEB_MAIN: DeliveryNumbers = {
  rollouts: { total: 1, succeeded: 1, failed: 0, superseded: 0, inProgress: 0, withoutSubscribers: 0 },
  deploymentFrequency: { successfulRollouts: 1, perDay: 0.5 },
  leadTime: { firstHost: summary(1, 3660, 3660), lastHost: summary(1, 7200, 7200), withoutBuildTime: 0 },
  convergence: { to50Percent: summary(1, 300, 300), to90Percent: summary(1, 540, 540), to100Percent: summary(1, 3600, 3600) },
  changeFailureRate: { judged: 1, failures: 0, withFailureReports: 0, supersededWithinFixWindow: 0, rate: 0 },
  timeToRestore: { ...NONE, failures: 0, notRestored: 0 },
  laggingHosts: [{ host: 'web-10', lagged: 1, notConverged: 0, medianBehindSeconds: 3300, maxBehindSeconds: 3300 }],
  trend: [day('2026-11-10', 1, 1, 1, 0, 0, 7200, 3600), EMPTY_DAY_2],
  recentRollouts: ['prod/web 3.0 succeeded'],
};

export const DELIVERY_CASES: readonly DeliveryCase[] = [
  { name: 'the whole fleet', expected: WHOLE },
  { name: 'a workspace and an application (all of the fleet)', workspace: 'contoso', application: 'shop', expected: WHOLE },
  {
    // R1 R2 R3 W1 R4.
    name: 'an environment',
    environment: 'prod',
    expected: {
      rollouts: { total: 5, succeeded: 4, failed: 1, superseded: 0, inProgress: 0, withoutSubscribers: 0 },
      deploymentFrequency: { successfulRollouts: 4, perDay: 2 },
      // First host 780 3660 3900 3900 7800; last host 3600 7200 7200 14400.
      leadTime: { firstHost: summary(5, 3900, 6240), lastHost: summary(4, 7200, 12240), withoutBuildTime: 0 },
      // 50 %: 300 300 600 900; 90 %: 540 3000 3600 7200; 100 %: 3000 3600 3600 7200.
      convergence: { to50Percent: summary(4, 450, 810), to90Percent: summary(4, 3300, 6120), to100Percent: summary(4, 3600, 6120) },
      changeFailureRate: { judged: 5, failures: 2, withFailureReports: 2, supersededWithinFixWindow: 0, rate: 0.4 },
      timeToRestore: { ...summary(2, 5850, 6690), failures: 2, notRestored: 0 },
      laggingHosts: [WHOLE.laggingHosts[0]!, WHOLE.laggingHosts[2]!],
      trend: [day('2026-11-10', 4, 3, 4, 1, 0.25, 7200, 3600), day('2026-11-11', 1, 1, 1, 1, 1, 14400, 7200)],
      recentRollouts: WHOLE.recentRollouts.filter((row) => row.startsWith('prod/')),
    },
  },
  { name: 'another environment', environment: 'dev', expected: DEV },
  { name: 'a workload and a deployment target', environment: 'dev', workload: 'cart', deploymentTarget: 'edge', expected: DEV },
  // The rollouts of the endpoints the host pulls; of the laggards, the host's own lag only.
  { name: 'a host that lags', host: 'dev-2', expected: DEV },
  { name: 'a host that does not', host: 'web-03', expected: { ...WEB_MAIN, laggingHosts: [] } },
  { name: 'a workload', workload: 'web', expected: WEB_MAIN },
  {
    // R4 and D2; Q1 (day 1) is outside too.
    name: 'a shorter window',
    sinceMinute: 1440,
    expected: {
      rollouts: { total: 2, succeeded: 1, failed: 0, superseded: 0, inProgress: 1, withoutSubscribers: 0 },
      deploymentFrequency: { successfulRollouts: 1, perDay: 1 },
      // First host 3900 7800; 50 %: 300 900.
      leadTime: { firstHost: summary(2, 5850, 7410), lastHost: summary(1, 14400, 14400), withoutBuildTime: 0 },
      convergence: { to50Percent: summary(2, 600, 840), to90Percent: summary(1, 7200, 7200), to100Percent: summary(1, 7200, 7200) },
      changeFailureRate: { judged: 1, failures: 1, withFailureReports: 1, supersededWithinFixWindow: 0, rate: 1 },
      timeToRestore: { ...summary(1, 6900, 6900), failures: 1, notRestored: 0 },
      // Each lagged once; dev-2 has not converged, so it comes first.
      laggingHosts: [
        { host: 'dev-2', lagged: 1, notConverged: 1, medianBehindSeconds: null, maxBehindSeconds: null },
        { host: 'prod-4', lagged: 1, notConverged: 0, medianBehindSeconds: 6300, maxBehindSeconds: 6300 },
      ],
      trend: [day('2026-11-11', 2, 1, 1, 1, 1, 14400, 7200)],
      recentRollouts: WHOLE.recentRollouts.slice(0, 2),
    },
  },
  // Superseded after R2 40 min (a failure anyway), R1 180 min, R3 1280 min, D1 1300 min.
  { name: 'no fix window', fixWindowSeconds: 0, expected: WHOLE },
  { name: 'a fix window of 30 minutes', fixWindowSeconds: 1800, expected: WHOLE },
  {
    name: 'a fix window of 4 hours',
    fixWindowSeconds: 14_400,
    expected: {
      ...WHOLE,
      changeFailureRate: { judged: 6, failures: 3, withFailureReports: 2, supersededWithinFixWindow: 1, rate: 0.5 },
      trend: [day('2026-11-10', 5, 4, 5, 2, 0.4, 5400, 3300), WHOLE.trend[1]!],
      recentRollouts: WHOLE.recentRollouts.map((row) => (row === 'prod/cart 1.0 succeeded' ? `${row} change failure` : row)),
    },
  },
  {
    name: 'a fix window of a day',
    fixWindowSeconds: 86_400,
    expected: {
      ...WHOLE,
      changeFailureRate: { judged: 6, failures: 5, withFailureReports: 2, supersededWithinFixWindow: 3, rate: 0.8333 },
      trend: [day('2026-11-10', 5, 4, 5, 4, 0.8, 5400, 3300), WHOLE.trend[1]!],
      recentRollouts: WHOLE.recentRollouts.map((row) => (/^(prod\/cart 1\.0|prod\/cart 1\.1\.1|dev\/cart 1\.1) /.test(row) ? `${row} change failure` : row)),
    },
  },
];

/** The case's window. */
export function caseWindow(deliveryCase: DeliveryCase): { since: Date; until: Date } {
  return { since: deliveryAt(deliveryCase.sinceMinute ?? 0), until: deliveryAt(deliveryCase.untilMinute ?? 2880) };
}

/** A listed rollout as the table names it. */
export function rolloutLine(row: { environment: string; workload: string; version: string; status: string; changeFailure: boolean }): string {
  return `${row.environment}/${row.workload} ${row.version} ${row.status}${row.changeFailure ? ' change failure' : ''}`;
}
