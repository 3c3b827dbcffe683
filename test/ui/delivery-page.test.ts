// The Delivery page in headless Chromium against a hub fed, through the official OTLP exporter, a
// small fleet whose every delivery number is computed by hand below: the headline tiles, the
// trend charts (one mark per day), the lagging hosts and the newest rollouts, and filters that
// live in the URL and change those numbers. A screenshot lands in test-artifacts/ui/delivery.png.
//
// Times are minutes after T0, midnight (UTC) two days before today, so that the fleet lies in the
// page's "last 7 days"; the one old rollout, O1, lies 20 days before T0: in 30 days, not in 7.
// Hosts prod-1..3 pull prod/cart/edge (prod-3 is slow), dev-1..2 dev/cart/edge, web-1 prod/web/main.
//
//  rollout  target          version  build   assigned  subscribers succeed at
//  O1       prod/web/main   2.0      -28830  -28800    web-1 -28790
//  R1       prod/cart/edge  1.0      0       60        prod-1 65, prod-2 70, prod-3 120
//  D1       dev/cart/edge   1.1      180     200       dev-1 202, dev-2 210
//  R2       prod/cart/edge  1.1      180     240       prod-2 245; prod-1 fails 250; prod-3 in progress; superseded by R3
//  R3       prod/cart/edge  1.1.1    270     280       prod-1 285, prod-2 290, prod-3 330 (restores R2)
//  D2       dev/cart/edge   1.2      1440    1500      dev-1 1505; dev-2 in progress (still under way)
//  R4       prod/cart/edge  1.2      1440    1560      prod-3 fails 1565; prod-1 1570, prod-2 1575, prod-3 1600
//
//  seconds  lead first  lead last  conv 50  conv 90/100  restore  laggard (behind the 50 % point)
//  O1       2400        2400       600      600          -        -
//  R1       3900        7200       600      3600         -        prod-3 3000
//  D1       1320        1800       120      600          -        dev-2 480
//  R2       3900        -          -        -            4800     prod-3 (not converged)
//  R3       900         3600       600      3000         -        prod-3 2400
//  D2       3900        -          300      -            -        dev-2 (not converged)
//  R4       7800        9600       900      2400         2100     prod-3 1500
//
// Last 30 days: 5 successful (O1 R1 D1 R3 R4) → 0.17 / day; lead last 1800 2400 3600 7200 9600 →
// median 3600, p90 8640; change failures R2 R4 of 6 judged (D2 is under way) → 33.3 %; restore
// 2100 4800 → median 3450. Last 7 days, without O1: 4 → 0.57 / day; lead last median 5400; 2 of 5.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { artifactPath, launchBrowser, type PageGlobals } from '../support/browser.ts';
import { CART, DELIVERY_STALE_AFTER_MS, type DeliveryEvent, deliveryLogSpec, descriptor, state, WEB } from '../support/delivery-fleet.ts';
import { buildLogRecords, createExporter, ExportResultCode, exportLogs } from '../support/otlp-client.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

const DAY_MS = 86_400_000;
const T0 = Math.floor(Date.now() / DAY_MS) * DAY_MS - 2 * DAY_MS;
const at = (minute: number) => new Date(T0 + minute * 60_000);
const dayOf = (time: number) => new Date(time).toISOString().slice(0, 10);
const DAY_A = dayOf(T0);
const DAY_B = dayOf(T0 + DAY_MS);
const DAY_OLD = dayOf(T0 - 20 * DAY_MS);

const fleet: DeliveryEvent[][] = [
  [
    descriptor(WEB, 'prod', '2.0', 'w1', -28_830, -28_800),
    descriptor(CART, 'prod', '1.0', 'c1', 0, 60),
    descriptor(CART, 'dev', '1.1', 'cd1', 180, 200),
    descriptor(CART, 'prod', '1.1', 'c2', 180, 240),
    descriptor(CART, 'prod', '1.1.1', 'c3', 270, 280),
  ],
  [
    state('web-1', WEB, 'prod', 'w1', 'success', -28_790),
    state('prod-1', CART, 'prod', 'c1', 'success', 65),
    state('prod-2', CART, 'prod', 'c1', 'success', 70),
    state('prod-3', CART, 'prod', 'c1', 'success', 120),
    state('dev-1', CART, 'dev', 'cd1', 'success', 202),
    state('dev-2', CART, 'dev', 'cd1', 'in_progress', 203),
    state('dev-2', CART, 'dev', 'cd1', 'success', 210),
    state('prod-2', CART, 'prod', 'c2', 'success', 245),
    state('prod-1', CART, 'prod', 'c2', 'failure', 250),
    state('prod-3', CART, 'prod', 'c2', 'in_progress', 255),
    state('prod-1', CART, 'prod', 'c3', 'success', 285),
    state('prod-2', CART, 'prod', 'c3', 'success', 290),
    state('prod-3', CART, 'prod', 'c3', 'success', 330),
  ],
  [descriptor(CART, 'dev', '1.2', 'cd2', 1440, 1500), descriptor(CART, 'prod', '1.2', 'c4', 1440, 1560)],
  [
    state('dev-1', CART, 'dev', 'cd2', 'success', 1505),
    state('dev-2', CART, 'dev', 'cd2', 'in_progress', 1510),
    state('prod-3', CART, 'prod', 'c4', 'failure', 1565),
    state('prod-1', CART, 'prod', 'c4', 'success', 1570),
    state('prod-2', CART, 'prod', 'c4', 'success', 1575),
    state('prod-3', CART, 'prod', 'c4', 'success', 1600),
  ],
];

let testDb: TestDatabase;
let hub: RunningHub;
let browser: Browser;
let page: Page;
let base: string;

beforeAll(async () => {
  testDb = await createTestDatabase();
  // History days old, judged as current (see DELIVERY_STALE_AFTER_MS).
  hub = await startTestHub(testDb.url, ['--stale-after', `${DELIVERY_STALE_AFTER_MS}ms`]);
  const exporter = createExporter('http-json', hub.ports);
  for (const batch of fleet) {
    const result = await exportLogs(exporter, await buildLogRecords(batch.map((event) => deliveryLogSpec(event, at))));
    expect(result.code, String(result.error)).toBe(ExportResultCode.SUCCESS);
  }
  await exporter.shutdown();
  base = `http://127.0.0.1:${hub.ports.http}`;
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await hub.stop();
  await testDb.drop();
});

beforeEach(async () => {
  await page?.close();
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
});

/** A headline tile's value and detail lines. */
const tile = (metric: string) =>
  page.$eval(`.tile[data-metric="${metric}"]`, (element) => [
    element.querySelector('.value')?.textContent,
    ...[...element.querySelectorAll('.detail')].map((detail) => detail.textContent),
  ]);
const tileValue = async (metric: string) => (await tile(metric))[0];
/** Waits until a tile shows the value (after a navigation the page loads anew); fails naming what it shows. */
async function showing(metric: string, value: string): Promise<void> {
  const selector = `.tile[data-metric="${metric}"] .value`;
  await page
    .waitForFunction(([css, text]) => (globalThis as unknown as PageGlobals).document.querySelector(css)?.textContent === text, [selector, value] as const, { timeout: 10_000 })
    .catch(() => undefined);
  expect(await tileValue(metric)).toBe(value);
}
const rows = (table: string) => page.$$eval(`table.${table} tbody tr`, (elements) => elements.map((row) => [...row.children].map((cell) => cell.textContent)));

/** The UTC days from the day of `since` to the one before `until`: the trend's days. */
function daysOf(since: string, until: string): string[] {
  const days: string[] = [];
  for (let day = Math.floor(Date.parse(since) / DAY_MS) * DAY_MS; day < Date.parse(until); day += DAY_MS) days.push(dayOf(day));
  return days;
}

describe('delivery page', () => {
  it('shows the headline numbers, the lagging hosts and the newest rollouts of the last 30 days', async () => {
    await page.goto(`${base}/delivery`);
    await page.waitForSelector('.tiles');
    expect(await page.locator('p.window').textContent()).toContain(': 7 — 5 succeeded, 1 failed, 1 in progress, 0 superseded');
    expect(await tile('deploymentFrequency')).toEqual(['0.17 / day', '5 successful rollouts in 30 days']);
    expect(await tile('leadTimeFirstHost')).toEqual(['1h 5m', 'median · p90 1h 31m · 7 rollouts', 'build → first host applied']);
    expect(await tile('leadTimeLastHost')).toEqual(['1h 0m', 'median · p90 2h 24m · 5 rollouts', 'build → every host applied']);
    expect(await tile('convergence50')).toEqual(['10m', 'median · p90 12m · 6 rollouts', 'assignment → half the hosts applied']);
    expect(await tileValue('convergence90')).toBe('40m');
    expect(await tile('convergence100')).toEqual(['40m', 'median · p90 56m · 5 rollouts', 'assignment → every host applied']);
    expect(await tile('changeFailureRate')).toEqual(['33.3 %', '2 of 6 finished rollouts']);
    expect(await tile('timeToRestore')).toEqual(['57m', 'median · p90 1h 15m · 2 rollouts', '2 with a failure, 0 not restored']);

    expect(await rows('lagging')).toEqual([
      ['prod-3', '4 rollouts', '1', '40m', '50m'],
      ['dev-2', '2 rollouts', '1', '8m', '8m'],
    ]);
    expect(await page.locator('table.lagging a:text-is("prod-3")').getAttribute('href')).toBe('/hosts/prod-3');

    expect(await page.$$eval('table.rollouts tbody tr', (elements) => elements.map((row) => `${row.getAttribute('data-environment')}/${row.getAttribute('data-workload')} ${row.getAttribute('data-version')}`))).toEqual([
      'prod/cart 1.2',
      'dev/cart 1.2',
      'prod/cart 1.1.1',
      'prod/cart 1.1',
      'dev/cart 1.1',
      'prod/cart 1.0',
      'prod/web 2.0',
    ]);
    // Columns after "Assigned" (a relative time): where, version, status, hosts, lead time, convergence, restore, lagging.
    const [r4, d2, , r2] = (await rows('rollouts')).map((cells) => cells.slice(1));
    // R4 is current: its hosts as of now (prod-3 failed first, succeeds now); the failure stays in its history.
    expect(r4).toEqual(['prod / cart / edge contoso / shop', '1.2 c4', 'succeeded change failure', '3/3', '2h 10m / 2h 40m', '15m / 40m / 40m', '35m', 'prod-3']);
    expect(d2).toEqual(['dev / cart / edge contoso / shop', '1.2 cd2', 'in progress', '1/2', '1h 5m / —', '5m / — / —', '—', 'dev-2']);
    expect(r2).toEqual(['prod / cart / edge contoso / shop', '1.1 c2', 'failed', '1/3 · 1 failed', '1h 5m / —', '— / — / —', '1h 20m', 'prod-3']);
    expect(await page.locator('table.rollouts tr[data-version="1.1"][data-environment="prod"] .badge').getAttribute('data-status')).toBe('failed');
    await page.screenshot({ path: await artifactPath('delivery'), fullPage: true });
  });

  it('draws one mark per day in every trend chart, labelled, with the numbers in a table', async () => {
    await page.goto(`${base}/delivery`);
    await page.waitForSelector('.trends figure');
    const window = page.locator('p.window');
    const days = daysOf((await window.getAttribute('data-since'))!, (await window.getAttribute('data-until'))!);
    expect(days.length).toBeGreaterThanOrEqual(30);
    expect(days).toContain(DAY_OLD);
    expect(days.at(-1)).toBe(dayOf(Date.now()));

    const charts = await page.$$eval('.trends figure', (figures) =>
      figures.map((figure) => ({
        chart: figure.getAttribute('data-chart'),
        label: figure.querySelector('svg')?.getAttribute('aria-label'),
        title: figure.querySelector('svg > title')?.textContent,
        marks: [...figure.querySelectorAll('svg .mark')].map((mark) => [mark.getAttribute('data-day'), mark.getAttribute('data-value')]),
        table: [...figure.querySelectorAll('details table tbody tr')].map((row) => [...row.children].map((cell) => cell.textContent)),
      })),
    );
    expect(charts.map((chart) => chart.chart)).toEqual(['rollouts', 'changeFailureRate', 'leadTime', 'convergence']);
    for (const chart of charts) {
      expect(chart.marks.map(([day]) => day), `${chart.chart}`).toEqual(days);
      expect(chart.table.map(([day]) => day), `${chart.chart}`).toEqual(days);
      expect(chart.label).toBe(chart.title);
    }
    const [rollouts, failures, leadTime, convergence] = charts.map((chart) => new Map(chart.marks as [string, string][]));
    const tables = charts.map((chart) => new Map(chart.table.map(([day, ...cells]) => [day!, cells])));
    expect([DAY_OLD, DAY_A, DAY_B, days.at(-1)!].map((day) => rollouts!.get(day))).toEqual(['1', '4', '2', '0']);
    expect(tables[0]!.get(DAY_A)).toEqual(['4', '3']);
    expect([DAY_OLD, DAY_A, DAY_B, days.at(-1)!].map((day) => failures!.get(day))).toEqual(['0', '0.25', '1', '']);
    expect(tables[1]!.get(DAY_A)).toEqual(['25 %']);
    expect([DAY_OLD, DAY_A, DAY_B].map((day) => leadTime!.get(day))).toEqual(['2400', '3600', '9600']);
    expect(tables[2]!.get(DAY_B)).toEqual(['2h 40m']);
    expect([DAY_OLD, DAY_A, DAY_B].map((day) => convergence!.get(day))).toEqual(['600', '3000', '2400']);
    expect(charts[0]!.label).toBe(`Rollouts per day, ${days[0]} to ${days.at(-1)}: highest 4 on ${DAY_A}`);

    // The shapes: a bar per day with rollouts (its successful part in green), a point per measured day.
    expect(await page.locator(`figure[data-chart="rollouts"] .mark[data-day="${DAY_A}"] rect.part`).count()).toBe(1);
    expect(await page.locator('figure[data-chart="rollouts"] rect.bar').count()).toBe(days.length);
    expect(await page.locator('figure[data-chart="leadTime"] circle.point').count()).toBe(3);
    expect(await page.locator('figure[data-chart="leadTime"] path.line').count()).toBe(1);
  });

  it('keeps the tables of numbers a reader opened open when it refreshes', async () => {
    await page.goto(`${base}/delivery`);
    await page.waitForSelector('.trends figure');
    const until = await page.locator('p.window').getAttribute('data-until');
    await page.click('figure[data-chart="leadTime"] summary');
    // The page refreshes every 10 s, moving its window along.
    await page.waitForFunction((before) => (globalThis as unknown as PageGlobals).document.querySelector('p.window')?.getAttribute('data-until') !== before, until, {
      timeout: 15_000,
    });
    expect(await page.$$eval('.trends details', (all) => all.map((details) => details.hasAttribute('open')))).toEqual([false, false, true, false]);
  }, 30_000);

  it('keeps its filters in the URL, and they change the numbers', async () => {
    await page.goto(`${base}/delivery`);
    await page.waitForSelector('.tiles');
    await page.selectOption('select[name="days"]', '7');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(`${base}/delivery?days=7`);
    await showing('deploymentFrequency', '0.57 / day');
    expect(await tile('deploymentFrequency')).toEqual(['0.57 / day', '4 successful rollouts in 7 days']);
    expect(await tileValue('leadTimeLastHost')).toBe('1h 30m');
    expect(await tileValue('changeFailureRate')).toBe('40 %');
    expect(await page.locator('figure[data-chart="rollouts"] .mark').count()).toBeLessThanOrEqual(8);
    expect(await page.locator(`figure[data-chart="rollouts"] .mark[data-day="${DAY_OLD}"]`).count()).toBe(0);

    await page.selectOption('select[name="environment"]', 'dev');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(`${base}/delivery?days=7&environment=dev`);
    await showing('deploymentFrequency', '0.14 / day');
    expect(await tileValue('leadTimeLastHost')).toBe('30m');
    expect(await tile('changeFailureRate')).toEqual(['0 %', '0 of 1 finished rollouts']);
    expect(await tile('timeToRestore')).toEqual(['—', 'median · p90 — · 0 rollouts', '0 with a failure, 0 not restored']);
    expect(await rows('lagging')).toEqual([['dev-2', '2 rollouts', '1', '8m', '8m']]);
    expect(await page.$$eval('table.rollouts tbody tr', (elements) => elements.map((row) => row.getAttribute('data-version')))).toEqual(['1.2', '1.1']);

    // The form shows what the URL says, so that a reloaded or shared view can be changed further.
    await page.reload();
    await showing('deploymentFrequency', '0.14 / day');
    expect(await page.locator('select[name="days"]').inputValue()).toBe('7');
    expect(await page.locator('select[name="environment"]').inputValue()).toBe('dev');

    await page.goto(`${base}/delivery?host=prod-3`);
    await showing('deploymentFrequency', '0.1 / day');
    expect(await page.locator('input[name="host"]').inputValue()).toBe('prod-3');
    expect(await rows('lagging')).toEqual([['prod-3', '4 rollouts', '1', '40m', '50m']]);
  });

  it('counts rollouts superseded within a longer fix window as change failures', async () => {
    await page.goto(`${base}/delivery`);
    await page.waitForSelector('.tiles');
    // Superseded after: R1 180 min, D1 1300 min, R3 1280 min — all within two days.
    await page.fill('input[name="fixWindow"]', '2d');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(`${base}/delivery?days=30&fixWindow=2d`);
    await showing('changeFailureRate', '83.3 %');
    expect(await tile('changeFailureRate')).toEqual(['83.3 %', '5 of 6 finished rollouts', '3 of them superseded within 2d 0h']);
    expect(await page.locator('table.rollouts tr[data-version="1.0"] .change-failure').count()).toBe(1);
  });

  it('says so when no rollout matches, and shows why a filter is refused', async () => {
    await page.goto(`${base}/delivery?workload=nothing-here`);
    await page.waitForSelector('p.empty');
    expect(await page.locator('p.window').textContent()).toContain(': 0 —');
    expect(await page.locator('.tiles, .trends, table').count()).toBe(0);

    await page.goto(`${base}/delivery?fixWindow=soon`);
    await page.waitForSelector('p.error');
    expect(await page.locator('p.error').textContent()).toMatch(/^Could not load: fixWindow: /);
  });

  it('is one of the views in the navigation', async () => {
    await page.goto(`${base}/`);
    await page.click('nav a:text-is("Delivery")');
    await page.waitForURL(`${base}/delivery`);
    await page.waitForSelector('.tiles');
    expect(await page.locator('nav a[aria-current="page"]').textContent()).toBe('Delivery');
    expect(await page.locator('h1').textContent()).toBe('Delivery');
  });
});
