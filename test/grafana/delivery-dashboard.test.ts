// The Delivery dashboard on the delivery fleet (test/support/delivery-fleet.ts, every number computed
// by hand): its panels' SQL, expanded as Grafana expands it for 2026-11-10..12 and run as
// kalypso_reader, gives the hand-computed numbers — and the same numbers as the API's delivery
// report (src/store/reports/delivery-report.ts) for every slice and fix window.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARDS } from '../../scripts/grafana-dashboards.ts';
import { customValues, expandGrafanaSql, type TimeRange } from '../../scripts/grafana-sql.ts';
import { createLogger } from '../../src/log/logger.ts';
import { connectDatabase, type Database } from '../../src/store/connect.ts';
import { deliveryReport } from '../../src/store/reports/delivery-report.ts';
import { DELIVERY_STALE_AFTER_MS, deliveryAt, writeDeliveryFleet } from '../support/delivery-fleet.ts';
import { type Dashboard, resolveVariables } from '../support/grafana.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const RANGE: TimeRange = { from: new Date('2026-11-10T00:00:00Z'), to: new Date('2026-11-12T00:00:00Z') };
const DAY_1 = Date.UTC(2026, 10, 10) / 1000;
const DAY_2 = Date.UTC(2026, 10, 11) / 1000;
const dashboard = DASHBOARDS['delivery.json'] as unknown as Dashboard;

let testDb: TestDatabase;
let database: Database;
let reader: pg.Client;

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = connectDatabase({ url: testDb.url, poolSize: 2, connectTimeoutMs: 5_000, applicationName: 'test' }, createLogger('silent'));
  await writeDeliveryFleet(database.db);
  reader = new pg.Client({ connectionString: testDb.url });
  await reader.connect();
  await reader.query('SET ROLE kalypso_reader');
});

afterAll(async () => {
  await reader.end();
  await database.close();
  await testDb.drop();
});

type Row = Record<string, any>;
const INT8 = 20;
const NUMERIC = 1700;

/**
 * The rows of a panel's query with the variables in `chosen` set (the others at "All", the fix
 * window at its default of one hour); bigint and numeric as numbers, as Grafana shows them.
 */
async function panelRows(title: string, chosen: Record<string, string[]> = {}): Promise<Row[]> {
  const panel = dashboard.panels.find((candidate) => candidate.title === title);
  if (panel === undefined) throw new Error(`no panel "${title}"`);
  const variables = await resolveVariables(reader, dashboard, RANGE, chosen);
  const result = await reader.query(expandGrafanaSql(panel.targets[0]!.rawSql, variables, RANGE));
  const numeric = result.fields.filter((field) => field.dataTypeID === INT8 || field.dataTypeID === NUMERIC).map((field) => field.name);
  return result.rows.map((row: Row) => {
    for (const name of numeric) if (row[name] !== null) row[name] = Number(row[name]);
    return row;
  });
}

async function statValues(title: string, chosen: Record<string, string[]> = {}): Promise<Row> {
  const rows = await panelRows(title, chosen);
  expect(rows, title).toHaveLength(1);
  return rows[0]!;
}

describe('Delivery dashboard on the delivery fleet, 2026-11-10..12, everything selected, fix window 1 hour', () => {
  it('stat panels: the hand-computed DORA numbers', async () => {
    // 5 successful rollouts in 2 days.
    expect(await statValues('Deployment frequency')).toEqual({ per_day: 2.5, successful_rollouts: 5 });
    // First host: 780 1320 3660 3900 3900 3900 7800; last host: 1800 3600 7200 7200 14400.
    expect(await statValues('Lead time (median)')).toEqual({ first_host: 3900, last_host: 7200 });
    // 50 %: 120 300 300 300 600 900; 90 %: 540 600 3000 3600 7200; 100 %: 600 3000 3600 3600 7200.
    expect(await statValues('Convergence (median)')).toEqual({ to_50_percent: 300, to_90_percent: 3000, to_100_percent: 3600 });
    // R2 and R4 had failure reports; D2 is still under way (not judged).
    const changeFailures = await statValues('Change failure rate');
    expect(changeFailures).toEqual({ change_failure_rate: expect.closeTo(2 / 6, 10), change_failures: 2, judged: 6 });
    // R2: 250 → R3 converged at 330 (4800 s); R4: 1565 → itself converged at 1680 (6900 s).
    expect(await statValues('Time to restore (median)')).toEqual({ time_to_restore: 5850, not_restored: 0 });
  });

  it('lagging hosts: how often, how many not converged, how far behind the 50 % point', async () => {
    expect(await panelRows('Lagging hosts')).toEqual([
      { host: 'prod-4', lagged: 4, not_converged: 1, median_behind_seconds: 3000, max_behind_seconds: 6300 },
      { host: 'dev-2', lagged: 2, not_converged: 1, median_behind_seconds: 480, max_behind_seconds: 480 },
      { host: 'web-10', lagged: 1, not_converged: 0, median_behind_seconds: 3300, max_behind_seconds: 3300 },
    ]);
  });

  it('rollouts: newest first, with their numbers; none without subscribers', async () => {
    const rows = await panelRows('Rollouts');
    expect(rows.map((row) => `${row.environment}/${row.workload} ${row.version} ${row.status}${row.change_failure === true ? ' change failure' : ''}`)).toEqual([
      'prod/cart 1.2 succeeded change failure',
      'dev/cart 1.2 in_progress',
      'prod/web 3.0 succeeded',
      'prod/cart 1.1.1 succeeded',
      'prod/cart 1.1 failed change failure',
      'dev/cart 1.1 succeeded',
      'prod/cart 1.0 succeeded',
    ]);
    expect(rows[4]).toEqual({
      assigned_at: deliveryAt(240),
      environment: 'prod',
      workspace: 'contoso',
      application: 'shop',
      workload: 'cart',
      deployment_target: 'edge',
      version: '1.1',
      commit_id: 'c2',
      status: 'failed',
      change_failure: true,
      subscribers: 4,
      subscribers_succeeded: 1,
      subscribers_failed: 2,
      lead_time_first_host_seconds: 3900,
      lead_time_last_host_seconds: null,
      convergence_50_seconds: null,
      convergence_90_seconds: null,
      convergence_100_seconds: null,
      restore_seconds: 4800,
      lagging_hosts: 'prod-4',
      build_time: deliveryAt(180),
      superseded_at: deliveryAt(280),
      regressed_on: '',
    });
    expect(rows[0]).toMatchObject({
      lead_time_first_host_seconds: 7800,
      lead_time_last_host_seconds: 14400,
      convergence_50_seconds: 900,
      convergence_90_seconds: 7200,
      convergence_100_seconds: 7200,
      restore_seconds: 6900,
      lagging_hosts: 'prod-4',
    });
    expect(rows[2]).toMatchObject({ subscribers: 10, convergence_50_seconds: 300, convergence_90_seconds: 540, convergence_100_seconds: 3600, lagging_hosts: 'web-10' });
  });

  it('daily series: per UTC day of assignment, as the API trend', async () => {
    const series = async (title: string) => (await panelRows(title)).map(({ time, ...values }) => ({ time, ...values }));
    expect(await series('Successful rollouts per day')).toEqual([
      { time: DAY_1, successful: 4 },
      { time: DAY_2, successful: 1 },
    ]);
    expect(await series('Change failure rate per day')).toEqual([
      { time: DAY_1, change_failure_rate: 0.2 },
      { time: DAY_2, change_failure_rate: 1 },
    ]);
    expect(await series('Lead time per day (median)')).toEqual([
      { time: DAY_1, first_host: 3660, last_host: 5400 },
      { time: DAY_2, first_host: 5850, last_host: 14400 },
    ]);
    expect(await series('Convergence per day (median)')).toEqual([
      { time: DAY_1, to_50_percent: 300, to_90_percent: 1800, to_100_percent: 3300 },
      { time: DAY_2, to_50_percent: 600, to_90_percent: 7200, to_100_percent: 7200 },
    ]);
  });
});

describe('Delivery dashboard variables', () => {
  it('the fix window: a quickly superseded rollout counts as a change failure', async () => {
    const fixWindow = dashboard.templating.list.find((variable) => variable.name === 'fix_window')!;
    expect(customValues(fixWindow.query)).toEqual(['0', '1800', '3600', '14400', '86400']);
    expect(fixWindow.current?.value).toBe('3600');
    // Superseded after: R2 40 min (a failure anyway), R1 180 min, R3 1280 min, D1 1300 min.
    const rate = async (seconds: string) => await statValues('Change failure rate', { fix_window: [seconds] });
    expect(await rate('0')).toMatchObject({ change_failures: 2, judged: 6 });
    expect(await rate('1800')).toMatchObject({ change_failures: 2, judged: 6 });
    expect(await rate('14400')).toMatchObject({ change_failures: 3, judged: 6 });
    expect(await rate('86400')).toMatchObject({ change_failures: 5, judged: 6 });
  });

  it('an environment', async () => {
    const prod = { environment: ['prod'] };
    expect(await statValues('Deployment frequency', prod)).toEqual({ per_day: 2, successful_rollouts: 4 });
    expect(await statValues('Change failure rate', prod)).toEqual({ change_failure_rate: 0.4, change_failures: 2, judged: 5 });
    expect((await panelRows('Lagging hosts', prod)).map((row) => row.host)).toEqual(['prod-4', 'web-10']);
  });

  it('a host: the rollouts of the endpoints it pulls, and its own lag', async () => {
    const dev2 = { host: ['dev-2'] };
    expect(await statValues('Deployment frequency', dev2)).toEqual({ per_day: 0.5, successful_rollouts: 1 });
    expect((await panelRows('Rollouts', dev2)).map((row) => `${row.environment}/${row.workload} ${row.version}`)).toEqual(['dev/cart 1.2', 'dev/cart 1.1']);
    expect(await panelRows('Lagging hosts', dev2)).toEqual([{ host: 'dev-2', lagged: 2, not_converged: 1, median_behind_seconds: 480, max_behind_seconds: 480 }]);
  });
});

describe('Delivery dashboard and GET /metrics/delivery', () => {
  const SLICES: Record<string, string[]>[] = [{}, { environment: ['prod'] }, { environment: ['dev'] }, { host: ['dev-2'] }, { host: ['web-03'] }, { workspace: ['contoso'], application: ['shop'] }];
  /** A rate as the API gives it: to four decimals. */
  const rate = (value: unknown): number | null => (value === null ? null : Math.round(Number(value) * 10_000) / 10_000);

  it.each(SLICES.flatMap((slice) => ['0', '3600', '86400'].map((fixWindow) => [JSON.stringify(slice), fixWindow, slice] as const)))(
    'give the same numbers for %s, fix window %s s',
    async (_name, fixWindow, slice) => {
      const chosen = { ...slice, fix_window: [fixWindow] };
      const api = await deliveryReport(database.db, { asOf: new Date(), staleAfterMs: DELIVERY_STALE_AFTER_MS }, {
        since: RANGE.from,
        until: RANGE.to,
        workspace: slice.workspace?.[0],
        application: slice.application?.[0],
        environment: slice.environment?.[0],
        host: slice.host?.[0],
        fixWindowSeconds: Number(fixWindow),
        limit: 500,
      });
      const frequency = await statValues('Deployment frequency', chosen);
      expect(frequency.per_day).toBeCloseTo(api.deploymentFrequency.perDay, 4);
      expect(frequency.successful_rollouts).toBe(api.deploymentFrequency.successfulRollouts);
      expect(await statValues('Lead time (median)', chosen)).toEqual({
        first_host: api.leadTime.firstHost.medianSeconds,
        last_host: api.leadTime.lastHost.medianSeconds,
      });
      expect(await statValues('Convergence (median)', chosen)).toEqual({
        to_50_percent: api.convergence.to50Percent.medianSeconds,
        to_90_percent: api.convergence.to90Percent.medianSeconds,
        to_100_percent: api.convergence.to100Percent.medianSeconds,
      });
      const changeFailures = await statValues('Change failure rate', chosen);
      expect({ ...changeFailures, change_failure_rate: rate(changeFailures.change_failure_rate) }).toEqual({
        change_failure_rate: api.changeFailureRate.rate,
        change_failures: api.changeFailureRate.failures,
        judged: api.changeFailureRate.judged,
      });
      expect(await statValues('Time to restore (median)', chosen)).toEqual({
        time_to_restore: api.timeToRestore.medianSeconds,
        not_restored: api.timeToRestore.notRestored,
      });
      expect(await panelRows('Lagging hosts', chosen)).toEqual(
        api.laggingHosts.map((host) => ({
          host: host.host,
          lagged: host.lagged,
          not_converged: host.notConverged,
          median_behind_seconds: host.medianBehindSeconds,
          max_behind_seconds: host.maxBehindSeconds,
        })),
      );
      // changeFailure === true: the API leaves it null (not false) for a converged rollout not yet superseded.
      const rollouts = await panelRows('Rollouts', chosen);
      expect(rollouts.map((row) => [row.environment, row.workload, row.version, row.status, row.change_failure, row.restore_seconds, row.lagging_hosts])).toEqual(
        api.recentRollouts.map((row) => [row.environment, row.workload, row.version, row.status, row.changeFailure === true, row.restoreSeconds, row.laggingHosts.join(', ')]),
      );
      // The API lists days without rollouts too (Grafana fills them in the panel).
      const trend = api.trend.filter((day) => day.rollouts > 0);
      const day = (row: Row) => new Date(Number(row.time) * 1000).toISOString().slice(0, 10);
      expect((await panelRows('Successful rollouts per day', chosen)).map((row) => [day(row), row.successful])).toEqual(trend.map((t) => [t.day, t.successful]));
      expect((await panelRows('Change failure rate per day', chosen)).map((row) => [day(row), rate(row.change_failure_rate)])).toEqual(
        trend.map((t) => [t.day, t.changeFailureRate]),
      );
      expect((await panelRows('Lead time per day (median)', chosen)).map((row) => [day(row), row.last_host])).toEqual(trend.map((t) => [t.day, t.leadTimeMedianSeconds]));
      expect((await panelRows('Convergence per day (median)', chosen)).map((row) => [day(row), row.to_100_percent])).toEqual(
        trend.map((t) => [t.day, t.convergenceMedianSeconds]),
      );
    },
  );
});
