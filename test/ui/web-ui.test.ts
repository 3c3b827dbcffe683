// The web UI in headless Chromium against a hub seeded with a known fleet: the cells, counts and
// colours the data implies, links from the matrix to a host to its history, live updates, and
// keyboard use. Screenshots of every page land in test-artifacts/ui/.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { artifactPath, launchBrowser, type PageGlobals } from '../support/browser.ts';
import { stateLog } from '../support/kalypso-logs.ts';
import { CART, endpointOf, type FleetBuilder, writeKnownFleet } from '../support/known-fleet.ts';
import { buildLogRecords, createExporter, ExportResultCode, exportLogs } from '../support/otlp-client.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

const GREEN = 'rgb(46, 125, 50)';
const RED = 'rgb(198, 40, 40)';
const AMBER = 'rgb(249, 168, 37)';
const GREY = 'rgb(158, 158, 158)';

let testDb: TestDatabase;
let hub: RunningHub;
let fleet: FleetBuilder;
let browser: Browser;
let page: Page;
let base: string;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url);
  fleet = await writeKnownFleet(hub.database.db);
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

const segments = (cell: string) =>
  page.$$eval(`${cell} .status-bar .segment`, (elements) =>
    elements.map((element) => ({
      status: element.getAttribute('data-status'),
      count: Number(element.getAttribute('data-count')),
      // (The callback runs in the page; the test program has no DOM types.)
      colour: (globalThis as unknown as { getComputedStyle(target: unknown): { backgroundColor: string } }).getComputedStyle(element).backgroundColor,
    })),
  );
const cell = (workload: string, environment: string) => `tr[data-workload="${workload}"] td[data-environment="${environment}"]`;

describe('environments matrix', () => {
  it('shows environments in promotion order, each cell’s desired and deployed versions, and what changed', async () => {
    await page.goto(`${base}/`);
    await page.waitForSelector('table.matrix');
    expect(await page.$$eval('table.matrix thead th', (headers) => headers.map((header) => header.textContent))).toEqual([
      'Workload / target',
      'dev',
      'qa',
      'staging',
      'prod',
    ]);
    expect(await page.$$eval('tr.group th', (groups) => groups.map((group) => group.textContent))).toEqual(['contoso / shop', 'kaizentm / greeting-service']);
    expect(await page.$$eval('table.matrix tbody tr[data-workload]', (rows) => rows.map((row) => row.getAttribute('data-workload')))).toEqual([
      'cart',
      'greeter-api',
      'hello-world',
    ]);
    const desired = (workload: string) =>
      Promise.all(['dev', 'qa', 'staging', 'prod'].map((environment) => page.$eval(cell(workload, environment), (element) => element.querySelector('.desired-version')?.textContent ?? element.textContent)));
    expect(await desired('hello-world')).toEqual(['0.0.3', '0.0.2', '0.0.2', '0.0.1']);
    // The discrepancy marks: a cell whose desired version differs from the previous environment
    // that has the target (as kalypso_environment_discrepancy says).
    const differs = (workload: string) =>
      Promise.all(['dev', 'qa', 'staging', 'prod'].map((environment) => page.$eval(cell(workload, environment), (element) => element.classList.contains('differs'))));
    expect(await differs('hello-world')).toEqual([false, true, false, true]);
    // greeter-api has no staging target: nothing to mark there, and prod (1.9.0) differs from qa (2.0.0).
    expect(await differs('greeter-api')).toEqual([false, false, false, true]);
    // The difference on hover and in words for a screen reader: staging has no greeter-api, so prod is compared with qa.
    const changed = page.locator(`${cell('greeter-api', 'prod')} .changed`);
    expect(await changed.getAttribute('title')).toBe('desired 1.9.0 here, 2.0.0 in qa');
    expect(await changed.locator('[aria-hidden="true"]').textContent()).toBe('▲ ');
    expect(await changed.locator('.visually-hidden').textContent()).toBe('Changed: desired 1.9.0 here, 2.0.0 in qa. ');
    expect(await page.$eval(cell('greeter-api', 'staging'), (element) => element.textContent)).toContain('not deployed here');
    expect(await page.$$eval(`${cell('hello-world', 'dev')} .deployed li`, (items) => items.map((item) => [item.textContent, item.className]))).toEqual([
      ['0.0.2 ×1', 'off-desired'],
      ['0.0.3 ×1', 'on-desired'],
    ]);

    expect(await segments(cell('hello-world', 'prod'))).toEqual([
      { status: 'success', count: 2, colour: GREEN },
      { status: 'stale', count: 1, colour: GREY },
    ]);
    expect(await segments(cell('greeter-api', 'dev'))).toEqual([
      { status: 'success', count: 1, colour: GREEN },
      { status: 'failure', count: 1, colour: RED },
    ]);
    expect(await segments(cell('cart', 'dev'))).toEqual([
      { status: 'success', count: 1, colour: GREEN },
      { status: 'in_progress', count: 1, colour: AMBER },
    ]);
    expect(await page.$$eval('.environment-summary li', (items) => items.map((item) => item.textContent?.split('Rollout of the last merge')[0]))).toEqual([
      'dev 3 targets · 2 hosts',
      'qa 2 targets · 1 hosts',
      'staging 1 targets · 1 hosts',
      'prod 3 targets · 4 hosts',
    ]);
    // Each environment's promotion check: the rollout of its newest desired commit, across the environment.
    expect(await page.$$eval('.environment-summary .promote-check', (links) => links.map((link) => link.getAttribute('href')))).toEqual(
      [
        ['dev', 'c-dev-3'],
        ['qa', 'g-qa-2'],
        ['staging', 'c-st-2'],
        ['prod', 'k-prod-51'],
      ].map(([environment, commit]) => `/rollout?environment=${environment}&commit=${commit}`),
    );
    await page.screenshot({ path: await artifactPath('matrix'), fullPage: true });
  });

  it('follows links from the matrix to a host and on to its history', async () => {
    await page.goto(`${base}/`);
    await page.click(`${cell('hello-world', 'dev')} .cell-links a:text("hosts")`);
    await page.waitForURL(`${base}/hosts?environment=dev`);
    await page.waitForSelector('table.hosts tbody tr');
    expect(await page.$$eval('table.hosts tbody tr', (rows) => rows.map((row) => row.getAttribute('data-host')))).toEqual(['dev-1', 'dev-2']);

    await page.click('a:text-is("dev-2")');
    await page.waitForURL(`${base}/hosts/dev-2`);
    await page.waitForSelector('table.reconcilers tbody tr');
    const hello = page.locator('tr[data-reconciler="flux-system/hello-world"]');
    expect(await hello.locator('td.deployed-version').textContent()).toBe('0.0.2');
    expect(await page.locator('tr[data-reconciler="flux-system/greeter-api"] .badge').textContent()).toBe('failed');
    await page.screenshot({ path: await artifactPath('host'), fullPage: true });

    await page.click('a.history-link');
    await page.waitForURL(`${base}/history?host=dev-2`);
    await page.waitForSelector('.timeline li.transition');
    expect(await page.$$eval('.timeline li.transition', (items) => items.map((item) => item.getAttribute('data-status')))).toEqual([
      'in_progress',
      'failure',
      'success',
    ]);
    expect(await page.locator('.timeline li.transition').nth(1).textContent()).toContain('health check failed');
    await page.screenshot({ path: await artifactPath('history'), fullPage: true });
  });
});

describe('hosts', () => {
  it('makes offline hosts obvious and filters by status through the URL', async () => {
    await page.goto(`${base}/hosts`);
    await page.waitForSelector('table.hosts tbody tr');
    expect(await page.$$eval('table.hosts tbody tr.offline', (rows) => rows.map((row) => row.getAttribute('data-host')))).toEqual(['prod-3', 'staging-1']);
    expect(await page.locator('.host-totals').textContent()).toBe('8 hosts · 2 offline · 1 failing · 1 drifting');
    // dev-2 is off the desired hello-world (0.0.2, not 0.0.3): marked as drifting.
    expect(await page.$$eval('table.hosts tbody tr.drifting', (rows) => rows.map((row) => row.getAttribute('data-host')))).toEqual(['dev-2']);
    await page.screenshot({ path: await artifactPath('hosts'), fullPage: true });
    await page.selectOption('select[name="status"]', 'stale');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(`${base}/hosts?status=stale`);
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).document.querySelectorAll('table.hosts tbody tr').length === 2);
    expect(await page.$$eval('table.hosts tbody tr', (rows) => rows.map((row) => row.getAttribute('data-host')))).toEqual(['prod-3', 'staging-1']);
  });

  it('refreshes by itself when a new host reports', async () => {
    await page.goto(`${base}/hosts`);
    await page.waitForSelector('tr[data-host="dev-1"]');
    const exporter = createExporter('http-protobuf', hub.ports);
    // Its own endpoint, so that no other page's numbers change.
    const records = await buildLogRecords([stateLog({ host: 'aaa-new-host', endpoint: 'https://github.com/contoso/gitops/dev/sandbox', commit: 'k-dev-51', at: new Date() })]);
    expect((await exportLogs(exporter, records)).code).toBe(ExportResultCode.SUCCESS);
    await exporter.shutdown();
    await page.waitForSelector('tr[data-host="aaa-new-host"]', { timeout: 15_000 });
  }, 30_000);
});

describe('drift', () => {
  it('lists what is not where it should be, filterable by environment', async () => {
    await page.goto(`${base}/drift`);
    await page.waitForSelector('table.drift tbody tr');
    expect(await page.$$eval('table.drift tbody tr', (rows) => rows.map((row) => [row.getAttribute('data-host'), row.getAttribute('data-reasons')]))).toEqual([
      ['dev-2', 'not_on_desired_commit'],
      ['staging-1', 'stale'],
      ['dev-2', 'failing'],
      ['prod-3', 'stale'],
    ]);
    expect(await page.locator('table.drift tbody tr').first().textContent()).toContain('1h 0m');
    await page.screenshot({ path: await artifactPath('drift'), fullPage: true });
    await page.goto(`${base}/drift?environment=dev`);
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).document.querySelectorAll('table.drift tbody tr').length === 2);
  });
});

describe('rollout', () => {
  it('fills in live as subscribers report', async () => {
    const endpoint = endpointOf('dev', 'cart', 'edge');
    await page.goto(`${base}/rollout?endpoint=${encodeURIComponent(endpoint)}&commit=k-dev-51`);
    await page.waitForSelector('.verdict');
    expect(await page.locator('.verdict').textContent()).toContain('1/2 succeeded');
    expect(await page.locator('tr[data-host="dev-2"]').getAttribute('data-status')).toBe('in_progress');
    await page.screenshot({ path: await artifactPath('rollout'), fullPage: true });
    const exporter = createExporter('grpc', hub.ports);
    const records = await buildLogRecords([
      stateLog({ host: 'dev-2', reconciler: `flux-system/${CART.workload}`, endpoint, commit: 'k-dev-51', at: new Date(fleet.t0 + 1_000) }),
    ]);
    expect((await exportLogs(exporter, records)).code).toBe(ExportResultCode.SUCCESS);
    await exporter.shutdown();
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).document.querySelector('.verdict')?.textContent?.startsWith('Rolled out') === true, undefined, {
      timeout: 10_000,
    });
    expect(await page.locator('.verdict').textContent()).toContain('2/2 succeeded');
    expect(await page.locator('tr[data-host="dev-2"]').getAttribute('data-status')).toBe('success');
  });
});

describe('keyboard', () => {
  it('navigates with the keyboard alone', async () => {
    await page.goto(`${base}/`);
    await page.waitForSelector('table.matrix');
    await page.keyboard.press('Tab'); // the skip link
    await page.keyboard.press('Tab'); // the brand
    await page.keyboard.press('Tab'); // Environments
    await page.keyboard.press('Tab'); // Hosts
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Hosts');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${base}/hosts`);
    expect(await page.locator('nav a[aria-current="page"]').textContent()).toBe('Hosts');
  });
});
