// Delivery metrics on a fleet whose every number is computed by hand (test/support/delivery-fleet.ts
// has the fleet, test/support/delivery-cases.ts the numbers for windows, slices and fix windows),
// sent through the official OTLP exporter and read through the API — the numbers the Grafana test
// reads through the dashboard's panels, from the same SQL functions (schema/0013).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { caseWindow, DELIVERY_CASES, type DeliveryCase, type DeliveryNumbers, rolloutLine } from '../support/delivery-cases.ts';
import { CART, DELIVERY_FLEET, DELIVERY_STALE_AFTER_MS, type DeliveryEvent, deliveryAt, deliveryEndpoint, deliveryLogSpec, WEB } from '../support/delivery-fleet.ts';
import { readDeliveryPanels } from '../support/delivery-panels.ts';
import { buildLogRecords, createExporter, ExportResultCode, exportLogs } from '../support/otlp-client.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';
import { waitFor } from '../support/wait-for.ts';

const iso = (minute: number) => deliveryAt(minute).toISOString();
const WINDOW = `since=${iso(0)}&until=${iso(2 * 1440)}`;

let testDb: TestDatabase;
let hub: RunningHub;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url, ['--stale-after', `${DELIVERY_STALE_AFTER_MS}ms`]);
  const exporter = createExporter('http-json', hub.ports);
  for (const batch of DELIVERY_FLEET) {
    const result = await exportLogs(exporter, await buildLogRecords(batch.map((event) => deliveryLogSpec(event))));
    expect(result.code, String(result.error)).toBe(ExportResultCode.SUCCESS);
  }
  await exporter.shutdown();
});

afterAll(async () => {
  await hub.stop();
  await testDb.drop();
});

async function get(query: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1/metrics/delivery?${query}`);
  return { status: response.status, body: await response.json() };
}

/** The request for a case: its window and slice, its fix window (the API's default when it has none). */
function caseQuery(deliveryCase: DeliveryCase): string {
  const { since, until } = caseWindow(deliveryCase);
  const query = new URLSearchParams({ since: since.toISOString(), until: until.toISOString() });
  for (const name of ['environment', 'workspace', 'application', 'workload', 'deploymentTarget', 'host'] as const) {
    const value = deliveryCase[name];
    if (value !== undefined) query.set(name, value);
  }
  if (deliveryCase.fixWindowSeconds !== undefined) query.set('fixWindow', `${deliveryCase.fixWindowSeconds}s`);
  return query.toString();
}

/** The numbers of the table in an answer. */
function answered(body: any): DeliveryNumbers {
  return {
    rollouts: body.rollouts,
    deploymentFrequency: body.deploymentFrequency,
    leadTime: body.leadTime,
    convergence: body.convergence,
    changeFailureRate: body.changeFailureRate,
    timeToRestore: body.timeToRestore,
    laggingHosts: body.laggingHosts,
    trend: body.trend,
    recentRollouts: body.recentRollouts.map(rolloutLine),
  };
}

// First, before the tests below add to the fleet.
describe('GET /metrics/delivery: the hand-computed numbers', () => {
  it.each(DELIVERY_CASES.map((deliveryCase) => [deliveryCase.name, deliveryCase] as const))('%s', async (_name, deliveryCase) => {
    const { status, body } = await get(caseQuery(deliveryCase));
    expect(status).toBe(200);
    expect(answered(body)).toEqual(deliveryCase.expected);
  });
});

describe('GET /metrics/delivery over the whole fleet', () => {
  it('says which window and fix window it judged by', async () => {
    const { status, body } = await get(WINDOW);
    expect(status).toBe(200);
    expect(body.window).toEqual({ since: iso(0), until: iso(2880), days: 2 });
    expect(body.fixWindowSeconds).toBe(3600);
    expect((await get(`${WINDOW}&fixWindow=2d`)).body.fixWindowSeconds).toBe(172_800);
  });

  it('lists the newest rollouts with their numbers', async () => {
    const { body } = await get(WINDOW);
    const rows = body.recentRollouts as any[];
    expect(rows[4]).toEqual({
      environment: 'prod',
      workspace: 'contoso',
      application: 'shop',
      workload: 'cart',
      deploymentTarget: 'edge',
      manifestsEndpoint: deliveryEndpoint('prod', CART),
      version: '1.1',
      commit: 'c2',
      buildTime: iso(180),
      assignedAt: iso(240),
      supersededAt: iso(280),
      status: 'failed',
      current: false,
      regressedOn: [],
      changeFailure: true,
      subscribers: 4,
      succeeded: 1,
      failed: 2,
      leadTimeFirstHostSeconds: 3900,
      leadTimeLastHostSeconds: null,
      convergence50Seconds: null,
      convergence90Seconds: null,
      convergence100Seconds: null,
      restoreSeconds: 4800,
      laggingHosts: ['prod-4'],
    });
    // R4 is current: its status and counts are as of now (prod-3 failed first and succeeds now),
    // its failure report stays in its history (a change failure, restored).
    expect(rows[0]).toMatchObject({
      status: 'succeeded',
      current: true,
      regressedOn: [],
      changeFailure: true,
      subscribers: 4,
      succeeded: 4,
      failed: 0,
      leadTimeFirstHostSeconds: 7800,
      leadTimeLastHostSeconds: 14400,
      convergence50Seconds: 900,
      convergence90Seconds: 7200,
      convergence100Seconds: 7200,
      restoreSeconds: 6900,
      laggingHosts: ['prod-4'],
    });
    expect(rows[1]).toMatchObject({ status: 'in_progress', changeFailure: false, subscribers: 2, succeeded: 1, convergence50Seconds: 300, laggingHosts: ['dev-2'] });
    expect(rows[2]).toMatchObject({ status: 'succeeded', subscribers: 10, convergence50Seconds: 300, convergence90Seconds: 540, convergence100Seconds: 3600, laggingHosts: ['web-10'] });
  });

  it('lists as many as asked, the newest first', async () => {
    const { body } = await get(`${WINDOW}&limit=2`);
    expect(body.recentRollouts.map(rolloutLine)).toEqual(['prod/cart 1.2 succeeded change failure', 'dev/cart 1.2 in_progress']);
    expect((await get(`${WINDOW}&limit=0`)).body.recentRollouts).toEqual([]);
  });

  it('an empty window has no numbers, and every day of it', async () => {
    const { body } = await get(`since=${iso(-3 * 1440)}&until=${iso(-1440)}`);
    expect(body.rollouts).toEqual({ total: 0, succeeded: 0, failed: 0, superseded: 0, inProgress: 0, withoutSubscribers: 0 });
    expect(body.leadTime.firstHost).toEqual({ count: 0, medianSeconds: null, p90Seconds: null });
    expect(body.changeFailureRate.rate).toBeNull();
    expect(body.trend.map((day: any) => [day.day, day.rollouts])).toEqual([
      ['2026-11-07', 0],
      ['2026-11-08', 0],
    ]);
  });

  it('refuses bad parameters naming them', async () => {
    expect(await get(`since=${iso(10)}&until=${iso(5)}`)).toEqual({
      status: 400,
      body: { error: { code: 'invalid_parameter', message: 'since: must be before until' } },
    });
    expect((await get('fixWindow=soon')).body.error.message).toMatch(/^fixWindow: /);
    expect((await get('until=yesterday')).body.error.message).toMatch(/^until: /);
    expect((await get('limit=100000')).body.error.message).toMatch(/^limit: /);
  });
});

describe('the per-rollout views (ad-hoc SQL; the dashboard calls the functions)', () => {
  it('give each rollout its numbers, for the read-only role', async () => {
    const client = new pg.Client({ connectionString: testDb.url });
    await client.connect();
    try {
      // The views follow the writes within the refresh interval (the API catches up before it reads).
      await waitFor(async () => (await client.query('SELECT count(*)::int AS n FROM rollout_refresh_queue')).rows[0].n === 0, 'the rollout refresh');
      await client.query('SET ROLE kalypso_reader');
      const rollouts = await client.query(`
        SELECT environment, workload, version, status, subscribers, lead_time_first_host_seconds::float8 AS lead_first,
               lead_time_last_host_seconds::float8 AS lead_last, convergence_50_seconds::float8 AS c50,
               convergence_90_seconds::float8 AS c90, convergence_100_seconds::float8 AS c100,
               restore_seconds::float8 AS restore, lagging_hosts
          FROM kalypso_delivery_rollout ORDER BY assigned_at`);
      expect(rollouts.rows).toEqual([
        { environment: 'prod', workload: 'cart', version: '1.0', status: 'succeeded', subscribers: 4, lead_first: 3900, lead_last: 7200, c50: 600, c90: 3600, c100: 3600, restore: null, lagging_hosts: ['prod-4'] },
        { environment: 'dev', workload: 'cart', version: '1.1', status: 'succeeded', subscribers: 2, lead_first: 1320, lead_last: 1800, c50: 120, c90: 600, c100: 600, restore: null, lagging_hosts: ['dev-2'] },
        { environment: 'prod', workload: 'cart', version: '1.1', status: 'failed', subscribers: 4, lead_first: 3900, lead_last: null, c50: null, c90: null, c100: null, restore: 4800, lagging_hosts: ['prod-4'] },
        { environment: 'prod', workload: 'cart', version: '1.1.1', status: 'succeeded', subscribers: 4, lead_first: 780, lead_last: 3600, c50: 300, c90: 3000, c100: 3000, restore: null, lagging_hosts: ['prod-4'] },
        { environment: 'qa', workload: 'cart', version: '1.1.1', status: 'no_subscribers', subscribers: 0, lead_first: null, lead_last: null, c50: null, c90: null, c100: null, restore: null, lagging_hosts: [] },
        { environment: 'prod', workload: 'web', version: '3.0', status: 'succeeded', subscribers: 10, lead_first: 3660, lead_last: 7200, c50: 300, c90: 540, c100: 3600, restore: null, lagging_hosts: ['web-10'] },
        { environment: 'dev', workload: 'cart', version: '1.2', status: 'in_progress', subscribers: 2, lead_first: 3900, lead_last: null, c50: 300, c90: null, c100: null, restore: null, lagging_hosts: ['dev-2'] },
        { environment: 'prod', workload: 'cart', version: '1.2', status: 'succeeded', subscribers: 4, lead_first: 7800, lead_last: 14400, c50: 900, c90: 7200, c100: 7200, restore: 6900, lagging_hosts: ['prod-4'] },
      ]);
      const laggards = await client.query(`
        SELECT host, count(*)::int AS lagged, percentile_cont(0.5) WITHIN GROUP (ORDER BY behind_seconds) AS median
          FROM kalypso_delivery_laggard GROUP BY host ORDER BY lagged DESC`);
      expect(laggards.rows).toEqual([
        { host: 'prod-4', lagged: 4, median: 3000 },
        { host: 'dev-2', lagged: 2, median: 480 },
        { host: 'web-10', lagged: 1, median: 3300 },
      ]);
    } finally {
      await client.end();
    }
  });
});

describe('the periodic refresh', () => {
  it('brings a new report into the views without anyone asking the API', async () => {
    const exporter = createExporter('grpc', hub.ports);
    const late: DeliveryEvent = { kind: 'state', host: 'dev-2', workload: CART, environment: 'dev', commit: 'cd2', status: 'success', minute: 1515 };
    expect((await exportLogs(exporter, await buildLogRecords([deliveryLogSpec(late)]))).code).toBe(ExportResultCode.SUCCESS);
    await exporter.shutdown();
    const client = new pg.Client({ connectionString: testDb.url });
    await client.connect();
    try {
      // D2 converges: dev-2 applied it 15 minutes after the assignment.
      const row = await waitFor(async () => {
        const { rows } = await client.query(
          `SELECT status, convergence_100_seconds AS c100, lagging_hosts FROM kalypso_delivery_rollout WHERE commit_id = 'cd2'`,
        );
        // Its status follows the summary refresh (schema/0033 keeps each current rollout's counts),
        // its convergence the rollout refresh: two timers, either may come first.
        return rows[0]?.c100 !== null && rows[0]?.status !== 'in_progress' ? rows[0] : undefined;
      }, 'the refresh timer');
      expect(row).toEqual({ status: 'succeeded', c100: 900, lagging_hosts: ['dev-2'] });
      const metrics = await (await fetch(`http://127.0.0.1:${hub.ports.http}/metrics`)).text();
      expect(Number(/^kalypso_rollouts_refreshed_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0);
      expect(Number(/^kalypso_rollout_refresh_seconds_count (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0);
    } finally {
      await client.end();
    }
  });
});

describe('a rollout replaced before it landed', () => {
  it('is judged superseded, and a change failure within the fix window', async () => {
    // After the refresh test D2 has converged. W2 (3.1) is assigned at 2000, web-01 starts on it,
    // and W3 (3.1.1) replaces it ten minutes later; nothing has applied W3 yet.
    const events: DeliveryEvent[] = [
      { kind: 'descriptor', workload: WEB, environment: 'prod', version: '3.1', commit: 'w2', buildMinute: 1900, assignedMinute: 2000 },
      { kind: 'state', host: 'web-01', workload: WEB, environment: 'prod', commit: 'w2', status: 'in_progress', minute: 2005 },
      { kind: 'descriptor', workload: WEB, environment: 'prod', version: '3.1.1', commit: 'w3', buildMinute: 1905, assignedMinute: 2010 },
    ];
    const exporter = createExporter('http-protobuf', hub.ports);
    for (const event of events) expect((await exportLogs(exporter, await buildLogRecords([deliveryLogSpec(event)]))).code).toBe(ExportResultCode.SUCCESS);
    await exporter.shutdown();

    const { body } = await get(WINDOW);
    expect(body.rollouts).toEqual({ total: 9, succeeded: 6, failed: 1, superseded: 1, inProgress: 1, withoutSubscribers: 1 });
    expect(body.changeFailureRate).toEqual({ judged: 8, failures: 3, withFailureReports: 2, supersededWithinFixWindow: 1, rate: 0.375 });
    const [w3, w2, r4, d2] = body.recentRollouts;
    expect(w3).toMatchObject({ version: '3.1.1', status: 'in_progress', changeFailure: false, subscribers: 10, succeeded: 0 });
    expect(w2).toMatchObject({ version: '3.1', status: 'superseded', changeFailure: true, subscribers: 1, succeeded: 0, supersededAt: iso(2010) });
    expect(r4).toMatchObject({ version: '1.2', environment: 'prod', changeFailure: true });
    expect(d2).toMatchObject({ version: '1.2', environment: 'dev', status: 'succeeded', changeFailure: false, convergence100Seconds: 900 });
    const none = await get(`${WINDOW}&fixWindow=0`);
    expect(none.body.changeFailureRate).toEqual({ judged: 8, failures: 2, withFailureReports: 2, supersededWithinFixWindow: 0, rate: 0.25 });

    // The dashboard shows the same, from the same functions: R1 R3 W1 D1 R4 and now D2 converged.
    const newest = ['prod/web 3.1.1 in_progress', 'prod/web 3.1 superseded change failure', 'prod/cart 1.2 succeeded change failure', 'dev/cart 1.2 succeeded'];
    expect(body.deploymentFrequency).toEqual({ successfulRollouts: 6, perDay: 3 });
    expect(body.recentRollouts.slice(0, 4).map(rolloutLine)).toEqual(newest);
    const reader = new pg.Client({ connectionString: testDb.url });
    await reader.connect();
    try {
      await reader.query('SET ROLE kalypso_reader');
      const range = { from: deliveryAt(0), to: deliveryAt(2880) };
      const panels = await readDeliveryPanels(reader, range, { fix_window: ['3600'] });
      expect(panels.deploymentFrequency).toEqual({ successfulRollouts: 6, perDay: 3 });
      expect(panels.changeFailureRate).toEqual({ judged: 8, failures: 3, rate: 0.375 });
      expect(panels.recentRollouts.slice(0, 4)).toEqual(newest);
      expect((await readDeliveryPanels(reader, range, { fix_window: ['0'] })).changeFailureRate).toEqual({ judged: 8, failures: 2, rate: 0.25 });
    } finally {
      await reader.end();
    }
  });
});
