// The Delivery dashboard on the delivery fleet (test/support/delivery-fleet.ts): its panels' SQL,
// expanded as Grafana expands it and run as kalypso_reader, shows the numbers worked out by hand in
// test/support/delivery-cases.ts — the same table test/api/delivery-metrics.test.ts asserts through
// the API — for every window, slice and fix window the dashboard's variables can express.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customValues, type TimeRange } from '../../scripts/grafana-sql.ts';
import type { Database } from '../../src/store/connect.ts';
import { caseWindow, DELIVERY_CASES } from '../support/delivery-cases.ts';
import { deliveryAt, writeDeliveryFleet } from '../support/delivery-fleet.ts';
import { DELIVERY_DASHBOARD, deliveryVariables, onPanels, readDeliveryPanels } from '../support/delivery-panels.ts';
import { panelRows } from '../support/grafana.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

const RANGE: TimeRange = { from: deliveryAt(0), to: deliveryAt(2880) };

let testDb: TestDatabase;
let database: Database;
let reader: pg.Client;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase(2));
  await writeDeliveryFleet(database.db);
  reader = new pg.Client({ connectionString: testDb.url });
  await reader.connect();
  await reader.query('SET ROLE kalypso_reader');
});

afterAll(async () => {
  await reader.end();
  await closeTestDatabase({ testDb, database });
});

const rows = (title: string, chosen: Record<string, string[]> = {}, range = RANGE) => panelRows(reader, DELIVERY_DASHBOARD, title, range, chosen);

describe('Delivery dashboard on the delivery fleet: the hand-computed numbers', () => {
  const cases = DELIVERY_CASES.flatMap((deliveryCase) => {
    const chosen = deliveryVariables(deliveryCase);
    return chosen === undefined ? [] : [{ deliveryCase, chosen }];
  });

  it.each(cases.map(({ deliveryCase, chosen }) => [deliveryCase.name, deliveryCase, chosen] as const))('%s', async (_name, deliveryCase, chosen) => {
    const { since, until } = caseWindow(deliveryCase);
    expect(await readDeliveryPanels(reader, { from: since, to: until }, chosen)).toEqual(onPanels(deliveryCase.expected));
  });
});

describe('Delivery dashboard panels beyond the table', () => {
  it('rollouts: each row with its numbers, a current one with its status of now', async () => {
    const listed = await rows('Rollouts');
    expect(listed[4]).toEqual({
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
    // R4 is current: prod-3 failed first and succeeds now — succeeded, and still a change failure.
    expect(listed[0]).toMatchObject({ status: 'succeeded', change_failure: true, subscribers: 4, subscribers_succeeded: 4, subscribers_failed: 0, restore_seconds: 6900 });
    // D2 is current and under way: dev-2 in progress.
    expect(listed[1]).toMatchObject({ status: 'in_progress', subscribers: 2, subscribers_succeeded: 1, lagging_hosts: 'dev-2' });
  });

  it('daily series: lead time to the first host, convergence to 50 and 90 %', async () => {
    // Day 1, first host: 780 1320 3660 3900 3900; 50 %: 120 300 300 600; 90 %: 540 600 3000 3600.
    // Day 2: first host 3900 7800, 50 % 300 900, 90 % 7200.
    const days = (await rows('Lead time per day (median)')).map((row) => [row.time, row.first_host]);
    expect(days).toEqual([
      [deliveryAt(0), 3660],
      [deliveryAt(1440), 5850],
    ]);
    expect((await rows('Convergence per day (median)')).map((row) => [row.to_50_percent, row.to_90_percent])).toEqual([
      [300, 1800],
      [600, 7200],
    ]);
  });

  it('a time range that ends at a rollout’s assignment leaves it out, as the API does', async () => {
    // R4 was assigned at minute 1560.
    const until1560 = await rows('Rollouts', {}, { from: RANGE.from, to: deliveryAt(1560) });
    expect(until1560.map((row) => row.version)).toEqual(['1.2', '3.0', '1.1.1', '1.1', '1.1', '1.0']);
    expect(until1560[0]).toMatchObject({ environment: 'dev', version: '1.2' });
  });

  it('offers the fix windows, the API’s default first chosen', () => {
    const fixWindow = DELIVERY_DASHBOARD.templating.list.find((variable) => variable.name === 'fix_window')!;
    expect(customValues(fixWindow.query)).toEqual(['0', '1800', '3600', '14400', '86400']);
    expect(fixWindow.current?.value).toBe('3600');
  });
});
