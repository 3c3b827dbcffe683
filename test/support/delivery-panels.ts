// The Grafana Delivery dashboard read as a person reads it: each panel's query, expanded as Grafana
// expands it and run by the given client (as kalypso_reader), turned into the numbers of the
// delivery table (test/support/delivery-cases.ts) that the panels show.
import type pg from 'pg';
import { DASHBOARDS } from '../../scripts/grafana-dashboards.ts';
import type { TimeRange } from '../../scripts/grafana-sql.ts';
import { type DeliveryCase, type DeliveryNumbers, rolloutLine } from './delivery-cases.ts';
import { type Dashboard, type PanelRow, panelRows } from './grafana.ts';

export const DELIVERY_DASHBOARD = DASHBOARDS['delivery.json'] as unknown as Dashboard;

/** What the panels show of a case's numbers: medians (not 90th percentiles), no counts by status. */
export interface PanelNumbers {
  deploymentFrequency: DeliveryNumbers['deploymentFrequency'];
  leadTimeMedians: { firstHost: number | null; lastHost: number | null };
  convergenceMedians: { to50Percent: number | null; to90Percent: number | null; to100Percent: number | null };
  changeFailureRate: { judged: number; failures: number; rate: number | null };
  timeToRestore: { medianSeconds: number | null; notRestored: number };
  laggingHosts: DeliveryNumbers['laggingHosts'];
  trend: Pick<DeliveryNumbers['trend'][number], 'day' | 'successful' | 'changeFailureRate' | 'leadTimeMedianSeconds' | 'convergenceMedianSeconds'>[];
  recentRollouts: string[];
}

export function onPanels(expected: DeliveryNumbers): PanelNumbers {
  return {
    deploymentFrequency: expected.deploymentFrequency,
    leadTimeMedians: { firstHost: expected.leadTime.firstHost.medianSeconds, lastHost: expected.leadTime.lastHost.medianSeconds },
    convergenceMedians: {
      to50Percent: expected.convergence.to50Percent.medianSeconds,
      to90Percent: expected.convergence.to90Percent.medianSeconds,
      to100Percent: expected.convergence.to100Percent.medianSeconds,
    },
    changeFailureRate: { judged: expected.changeFailureRate.judged, failures: expected.changeFailureRate.failures, rate: expected.changeFailureRate.rate },
    timeToRestore: { medianSeconds: expected.timeToRestore.medianSeconds, notRestored: expected.timeToRestore.notRestored },
    laggingHosts: expected.laggingHosts,
    trend: expected.trend.map(({ day, successful, changeFailureRate, leadTimeMedianSeconds, convergenceMedianSeconds }) => ({
      day,
      successful,
      changeFailureRate,
      leadTimeMedianSeconds,
      convergenceMedianSeconds,
    })),
    recentRollouts: expected.recentRollouts,
  };
}

/** The dashboard's variables for a case; undefined when it has none for a name the case slices by. */
export function deliveryVariables(deliveryCase: DeliveryCase): Record<string, string[]> | undefined {
  if (deliveryCase.workload !== undefined || deliveryCase.deploymentTarget !== undefined) return undefined;
  const chosen: Record<string, string[]> = { fix_window: [String(deliveryCase.fixWindowSeconds ?? 3600)] };
  if (deliveryCase.environment !== undefined) chosen['environment'] = [deliveryCase.environment];
  if (deliveryCase.workspace !== undefined) chosen['workspace'] = [deliveryCase.workspace];
  if (deliveryCase.application !== undefined) chosen['application'] = [deliveryCase.application];
  if (deliveryCase.host !== undefined) chosen['host'] = [deliveryCase.host];
  return chosen;
}

/** A rate as the API gives it: to four decimals. */
const rate = (value: unknown): number | null => (value === null ? null : Math.round(Number(value) * 10_000) / 10_000);
const utcDay = (time: Date): string => time.toISOString().slice(0, 10);

export async function readDeliveryPanels(client: pg.Client, range: TimeRange, chosen: Record<string, string[]>): Promise<PanelNumbers> {
  const rows = (title: string) => panelRows(client, DELIVERY_DASHBOARD, title, range, chosen);
  const stat = async (title: string): Promise<PanelRow> => {
    const result = await rows(title);
    if (result.length !== 1) throw new Error(`${title}: ${result.length} rows`);
    return result[0]!;
  };
  const frequency = await stat('Deployment frequency');
  const lead = await stat('Lead time (median)');
  const convergence = await stat('Convergence (median)');
  const failures = await stat('Change failure rate');
  const restore = await stat('Time to restore (median)');
  const perDay = async (title: string) => new Map((await rows(title)).map((row) => [utcDay(row.time as Date), row]));
  const successful = await perDay('Successful rollouts per day');
  const failureRate = await perDay('Change failure rate per day');
  const leadPerDay = await perDay('Lead time per day (median)');
  const convergencePerDay = await perDay('Convergence per day (median)');
  const days = [...successful.keys()];
  for (const series of [failureRate, leadPerDay, convergencePerDay]) {
    if ([...series.keys()].join() !== days.join()) throw new Error(`the daily panels disagree on the days: ${days.join()} / ${[...series.keys()].join()}`);
  }
  return {
    deploymentFrequency: { successfulRollouts: frequency.successful_rollouts, perDay: rate(frequency.per_day)! },
    leadTimeMedians: { firstHost: lead.first_host, lastHost: lead.last_host },
    convergenceMedians: { to50Percent: convergence.to_50_percent, to90Percent: convergence.to_90_percent, to100Percent: convergence.to_100_percent },
    changeFailureRate: { judged: failures.judged, failures: failures.change_failures, rate: rate(failures.change_failure_rate) },
    timeToRestore: { medianSeconds: restore.time_to_restore, notRestored: restore.not_restored },
    laggingHosts: (await rows('Lagging hosts')).map((row) => ({
      host: row.host,
      lagged: row.lagged,
      notConverged: row.not_converged,
      medianBehindSeconds: row.median_behind_seconds,
      maxBehindSeconds: row.max_behind_seconds,
    })),
    trend: days.map((day) => ({
      day,
      successful: successful.get(day)!.successful,
      changeFailureRate: rate(failureRate.get(day)!.change_failure_rate),
      leadTimeMedianSeconds: leadPerDay.get(day)!.last_host,
      convergenceMedianSeconds: convergencePerDay.get(day)!.to_100_percent,
    })),
    recentRollouts: (await rows('Rollouts')).map((row) =>
      rolloutLine({ environment: row.environment, workload: row.workload, version: row.version, status: row.status, changeFailure: row.change_failure }),
    ),
  };
}
