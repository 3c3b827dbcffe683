// The Hosts page at fleet scale in headless Chromium: 2,000 generated hosts with random names and
// numbers. The totals are the fleet's (not the page's), names are in natural order across pages,
// filters live in the URL, drifting hosts are marked, the table uses a wide screen, and on a phone
// the host name and its status stay on screen. Screenshots land in test-artifacts/ui/.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { artifactPath, launchBrowser } from '../support/browser.ts';
import { byNumber, expected, type FleetHost, type HostsFleet, planHostsFleet, writeHostsFleet } from '../support/hosts-fleet.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';
import { apiGet } from '../support/api-get.ts';

const HOSTS = 2_000;
const PAGE = 200;
/** The Rollout page's subscribers and targets per page. */
const ROLLOUT_PAGE = 100;
const PURPLE = 'rgb(130, 80, 223)';

let testDb: TestDatabase;
let hub: RunningHub;
let fleet: HostsFleet;
let browser: Browser;
let base: string;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url);
  fleet = planHostsFleet(HOSTS, 4);
  await writeHostsFleet(hub.database.db, fleet);
  base = `http://127.0.0.1:${hub.ports.http}`;
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await hub.stop();
  await testDb.drop();
});

const n = (value: number) => value.toLocaleString('en');

function summaryOf(hosts: readonly FleetHost[], of?: number): string {
  const judged = hosts.map(expected);
  const total = of === undefined ? `${n(hosts.length)} hosts` : `${n(hosts.length)} of ${n(of)} hosts`;
  const count = (test: (host: ReturnType<typeof expected>) => boolean) => n(judged.filter(test).length);
  const line = `${total} · ${count((host) => host.offline)} offline · ${count((host) => host.failing)} failing · ${count((host) => host.drifting > 0)} drifting`;
  // Filtered, the line ends with a way back to every host.
  return of === undefined ? line : `${line}all hosts`;
}

const sorted = (hosts: readonly FleetHost[]) => [...hosts].sort(byNumber);
const shownHosts = (page: Page) => page.$$eval('table.hosts tbody tr', (rows) => rows.map((row) => row.getAttribute('data-host')));
const byName = (name: string) => fleet.hosts.find((host) => host.name === name)!;

/** Waits until the page shows what a navigation asked for. */
const firstRowIs = (page: Page, name: string | undefined) => page.waitForSelector(`table.hosts tbody tr:first-child[data-host="${name}"]`);
const totalIs = (page: Page, count: number) => page.waitForSelector(`.host-totals .total.hosts[data-count="${count}"]`);

async function open(width: number, path: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  await page.goto(`${base}${path}`);
  await page.waitForSelector('table.hosts tbody tr');
  return page;
}

describe('hosts page at 1440 px', () => {
  it('shows the fleet’s totals, one page in natural order, numbers in the status bars and drift marked', async () => {
    const page = await open(1440, '/hosts');
    expect(await page.locator('.host-totals').textContent()).toBe(summaryOf(fleet.hosts));
    expect(await page.locator('div.pager .showing').textContent()).toBe(`showing 1–${PAGE} of ${n(HOSTS)}`);
    const shown = await shownHosts(page);
    expect(shown).toEqual(sorted(fleet.hosts).slice(0, PAGE).map((host) => host.name));

    // Every row: the numbers in its status bar and its drift badge, as the fleet was built.
    const rows = await page.$$eval('table.hosts tbody tr', (elements) =>
      elements.map((row) => ({
        host: row.getAttribute('data-host')!,
        segments: [...row.querySelectorAll('.status-bar .segment')].map((segment) => [segment.getAttribute('data-status'), segment.textContent]),
        label: row.querySelector('.status-bar')!.getAttribute('aria-label'),
        drift: row.querySelector('.badge.drifting')?.textContent ?? null,
        offline: row.classList.contains('offline'),
      })),
    );
    for (const row of rows) {
      const host = byName(row.host);
      const statuses = host.reconcilers.map((reconciler) => (host.offline ? 'stale' : reconciler.status));
      const want = (['success', 'failure', 'in_progress', 'stale'] as const)
        .map((status) => [status, String(statuses.filter((entry) => entry === status).length)])
        .filter(([, count]) => count !== '0');
      expect(row.segments, row.host).toEqual(want);
      expect(row.label, row.host).toMatch(new RegExp(` of ${statuses.length}$`));
      expect(row.drift, row.host).toBe(expected(host).drifting > 0 ? `${expected(host).drifting} drifting` : null);
      expect(row.offline, row.host).toBe(host.offline);
    }
    // A host whose every reconciler succeeded but one is off the desired rollout: all green, and marked.
    const green = rows.find((row) => row.drift !== null && !row.offline && row.segments.every(([status]) => status === 'success'));
    expect(green).toBeDefined();
    const badge = page.locator(`tr[data-host="${green!.host}"] .badge.drifting`);
    expect(await badge.evaluate((element) => (globalThis as unknown as { getComputedStyle(target: unknown): { backgroundColor: string } }).getComputedStyle(element).backgroundColor)).toBe(PURPLE);
    expect(await badge.isVisible()).toBe(true);

    // The table uses the width of a wide screen.
    const table = (await page.locator('table.hosts').boundingBox())!;
    expect(table.width).toBeGreaterThan(1440 * 0.9);
    await page.screenshot({ path: await artifactPath('hosts-1440'), fullPage: false });
    await page.close();
  });

  it('pages on with the cursor and back to the first page, the totals staying the fleet’s', async () => {
    const page = await open(1440, '/hosts');
    const natural = sorted(fleet.hosts).map((host) => host.name);
    await page.click('nav.pager a.next');
    await page.waitForURL(/\/hosts\?cursor=/);
    await firstRowIs(page, natural[PAGE]);
    expect(await shownHosts(page)).toEqual(natural.slice(PAGE, 2 * PAGE));
    expect(await page.locator('div.pager .showing').textContent()).toBe(`showing ${PAGE + 1}–${2 * PAGE} of ${n(HOSTS)}`);
    expect(await page.locator('.host-totals').textContent()).toBe(summaryOf(fleet.hosts));
    await page.click('div.pager a.next');
    await firstRowIs(page, natural[2 * PAGE]);
    expect(await shownHosts(page)).toEqual(natural.slice(2 * PAGE, 3 * PAGE));
    await page.click('div.pager a.first');
    await page.waitForURL(`${base}/hosts`);
    await firstRowIs(page, natural[0]);
    expect(await shownHosts(page)).toEqual(natural.slice(0, PAGE));
    expect(await page.locator('a.first').count()).toBe(0);
    await page.close();
  });

  it('filters by environment, drift, offline, status and name, through the URL', async () => {
    const page = await open(1440, '/hosts');
    const environment = fleet.environments[1]!;
    await page.selectOption('select[name="environment"]', environment);
    await page.selectOption('select[name="drifting"]', 'true');
    await page.selectOption('select[name="offline"]', 'false');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(`${base}/hosts?environment=${encodeURIComponent(environment)}&offline=false&drifting=true`);
    const want = sorted(fleet.hosts.filter((host) => host.environment === environment && !host.offline && expected(host).drifting > 0));
    await totalIs(page, want.length);
    expect(await page.locator('.host-totals').textContent()).toBe(summaryOf(want, HOSTS));
    expect(await shownHosts(page)).toEqual(want.slice(0, PAGE).map((host) => host.name));
    // The environment filter fills in on its own, in promotion order, keeping the one chosen.
    const choices = page.locator('select[name="environment"] option');
    await expect.poll(() => choices.count()).toBe(fleet.environments.length + 1);
    expect(await choices.evaluateAll((options) => options.map((option) => (option as unknown as { value: string }).value))).toEqual(['', ...fleet.environments]);
    expect(await page.locator('select[name="environment"]').inputValue()).toBe(environment);
    await page.screenshot({ path: await artifactPath('hosts-filtered'), fullPage: false });

    // A part of a name, typed in another case; status from the summary's link.
    const probe = sorted(fleet.hosts)[Math.floor(Math.random() * HOSTS)]!;
    const search = `NODE-${String(probe.n).slice(0, 2)}`;
    await page.goto(`${base}/hosts`);
    await page.fill('input[name="q"]', search);
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(`${base}/hosts?q=${search}`);
    const found = sorted(fleet.hosts.filter((host) => host.name.toLowerCase().includes(search.toLowerCase())));
    await totalIs(page, found.length);
    expect(await shownHosts(page)).toEqual(found.slice(0, PAGE).map((host) => host.name));
    await page.click('.host-totals a.failing');
    await page.waitForURL(`${base}/hosts?q=${search}&status=failure`);
    const failing = found.filter((host) => expected(host).failing);
    await totalIs(page, failing.length);
    expect(await page.inputValue('input[name="q"]')).toBe(search);
    expect(await page.inputValue('select[name="status"]')).toBe('failure');
    if (failing.length > 0) expect(await shownHosts(page)).toEqual(failing.map((host) => host.name));
    await page.click('.host-totals a.clear');
    await page.waitForURL(`${base}/hosts`);
    await totalIs(page, HOSTS);
    expect(await page.locator('.host-totals').textContent()).toBe(summaryOf(fleet.hosts));
    await page.close();
  });
});

describe('hosts page at 390 px', () => {
  it('keeps each host’s name and status on screen', async () => {
    const page = await open(390, '/hosts');
    const rows = page.locator('table.hosts tbody tr');
    for (let i = 0; i < 12; i += 1) {
      for (const cell of ['th.name', 'td.status .status-bar', 'th.name a']) {
        const box = (await rows.nth(i).locator(cell).first().boundingBox())!;
        expect(box, `row ${i} ${cell}`).not.toBeNull();
        expect(box.x, `row ${i} ${cell}`).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width, `row ${i} ${cell}`).toBeLessThanOrEqual(390);
        expect(box.width, `row ${i} ${cell}`).toBeGreaterThan(40);
      }
    }
    // Nothing pushes the page sideways.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    expect(await page.locator('.host-totals').textContent()).toBe(summaryOf(fleet.hosts));
    await page.screenshot({ path: await artifactPath('hosts-390'), fullPage: false });
    await page.close();
  });
});

describe('the promotion check of an environment of this fleet', () => {
  it('shows 100 of its subscribers, those holding the rollout up first, says how many there are, and pages on', async () => {
    const environment = fleet.environments[0]!;
    const commit = fleet.commits[environment]!.w3;
    const answer = (await apiGet(hub, `/deployment-state?environment=${environment}&commit=${commit}&limit=5000`)).body as {
      total: number;
      subscribers: { host: string; reconciler: string; status: string }[];
    };
    expect(answer.subscribers).toHaveLength(answer.total);
    expect(answer.total).toBeGreaterThan(ROLLOUT_PAGE);
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(`${base}/rollout?environment=${environment}&commit=${commit}`);
    await page.waitForSelector('table.subscribers tbody tr');
    const shown = () =>
      page.$$eval('table.subscribers tbody tr', (rows) => rows.map((row) => [row.getAttribute('data-host')!, row.getAttribute('data-status')!]));
    const first = await shown();
    expect(first).toHaveLength(ROLLOUT_PAGE);
    const order = ['failure', 'in_progress', 'stale', 'success'];
    const statuses = first.map(([, status]) => status);
    expect(statuses).toEqual([...statuses].sort((a, b) => order.indexOf(a) - order.indexOf(b)));
    const holding = answer.subscribers.filter((subscriber) => subscriber.status !== 'success').length;
    expect(statuses.filter((status) => status !== 'success')).toHaveLength(Math.min(holding, ROLLOUT_PAGE));
    // The page shows the hub's order: the first 100 of the whole answer.
    expect(first).toEqual(answer.subscribers.slice(0, ROLLOUT_PAGE).map((subscriber) => [subscriber.host, subscriber.status]));
    expect(await page.locator('.pager.subscribers .showing').textContent()).toBe(
      `Showing ${ROLLOUT_PAGE} of ${n(answer.total)} subscribers, those holding the rollout up first`,
    );
    await page.click('.pager.subscribers a[rel="next"]');
    await page.waitForURL((url) => url.searchParams.get('cursor') !== null);
    // The next page drawn: its first row is the answer's 101st (while the page loads, the table may be
    // empty or still show the first page). A selector, not a string to evaluate: the CSP forbids eval.
    const nextFirst = answer.subscribers[ROLLOUT_PAGE]!;
    await page.waitForSelector(
      `table.subscribers tbody tr:first-child[data-host=${JSON.stringify(nextFirst.host)}][data-status=${JSON.stringify(nextFirst.status)}]`,
    );
    expect(await shown()).toEqual(answer.subscribers.slice(ROLLOUT_PAGE, 2 * ROLLOUT_PAGE).map((subscriber) => [subscriber.host, subscriber.status]));
    await page.click('.pager.subscribers a.first');
    await page.waitForURL((url) => url.searchParams.get('cursor') === null);
    await page.close();
  });
});

describe('the drift page of this fleet', () => {
  it('counts every drifting reconciler, shows 200 a page, longest first, and pages on', async () => {
    const environment = fleet.environments[1]!;
    const { body } = await apiGet(hub, `/drift?environment=${environment}&limit=5000`);
    const all = body.items as { host: string; driftingSince: string }[];
    expect(all.length).toBeGreaterThan(PAGE);
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(`${base}/drift?environment=${environment}`);
    await page.waitForSelector('table.drift tbody tr');
    const { drifting, notOnDesiredCommit, failing, stale } = body.totals as { drifting: number; notOnDesiredCommit: number; failing: number; stale: number };
    expect(drifting).toBe(all.length);
    expect(await page.locator('p.drift-totals').textContent()).toBe(
      `${n(drifting)} drifting · ${n(notOnDesiredCommit)} not on the desired rollout · ${n(failing)} failing · ${n(stale)} silent (${PAGE} on this page, longest first)`,
    );
    const shown = () => page.$$eval('table.drift tbody tr', (rows) => rows.map((row) => row.getAttribute('data-host')));
    expect(await shown()).toEqual(all.slice(0, PAGE).map((item) => item.host));
    await page.click('nav.pager a[rel="next"]');
    await page.waitForURL((url) => url.searchParams.get('cursor') !== null);
    await page.waitForSelector(`table.drift tbody tr:first-child[data-host="${all[PAGE]!.host}"]`);
    expect(await shown()).toEqual(all.slice(PAGE, 2 * PAGE).map((item) => item.host));
    await page.close();
  });
});
