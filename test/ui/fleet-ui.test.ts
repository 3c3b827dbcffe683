// The web UI as the people who live in it use it, in headless Chromium, on the demo fleet fed
// through OTLP/HTTP as agents send it: refresh that never takes focus, scroll or a selection away;
// rollouts one click from wherever a commit is shown; times and commits in one form; an empty hub
// and failures that say so; and every page at a phone's 390 px and a desktop's 1440 px.
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { feedDemoFleet } from '../../src/demo/demo-feeder.ts';
import { DEMO_WORKLOADS, type DemoFleet, endpointOf } from '../../src/demo/demo-fleet.ts';
import { sendLogs } from '../../src/demo/otlp-http-sender.ts';
import type { RunningHub } from '../../src/hub.ts';
import { createLogger } from '../../src/log/logger.ts';
import { artifactPath, launchBrowser } from '../support/browser.ts';
import { randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

// The callbacks given to page.evaluate run in the page; the test program has no DOM types.
declare const document: any, window: any;

let testDb: TestDatabase;
let emptyDb: TestDatabase;
let hub: RunningHub;
let emptyHub: RunningHub;
let fleet: DemoFleet;
let browser: Browser;
let base: string;
const contexts: BrowserContext[] = [];

const HELLO = DEMO_WORKLOADS.find((workload) => workload.workload === 'hello-world')!;

beforeAll(async () => {
  [testDb, emptyDb] = await Promise.all([createTestDatabase(), createTestDatabase()]);
  [hub, emptyHub] = await Promise.all([startTestHub(testDb.url), startTestHub(emptyDb.url)]);
  base = `http://127.0.0.1:${hub.ports.http}`;
  fleet = await feedDemoFleet({ otlpEndpoint: `http://127.0.0.1:${hub.ports.otlpHttp}`, hosts: 40, log: createLogger('silent') });
  browser = await launchBrowser();
}, 90_000);

afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

afterAll(async () => {
  await browser?.close();
  await Promise.all([hub?.stop(), emptyHub?.stop()]);
  await Promise.all([testDb?.drop(), emptyDb?.drop()]);
});

async function open(path: string, options: BrowserContextOptions & { clock?: boolean; at?: string } = {}): Promise<Page> {
  const { clock, at, ...contextOptions } = options;
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, ...contextOptions });
  contexts.push(context);
  const page = await context.newPage();
  if (clock === true) await page.clock.install();
  await page.goto(`${at ?? base}${path}`);
  return page;
}

/** Waits until the page's content is loaded: nothing busy, no "Loading…". */
async function loaded(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const app = document.getElementById('app');
    return app !== null && app.querySelector('[aria-busy="true"]') === null && !(app.textContent ?? '').includes('Loading…');
  });
}

const matrixCell = (workload: string, environment: string) => `tr[data-workload="${workload}"] td[data-environment="${environment}"]`;

/** A reconciler report for the demo's staging catalog rollout, from a host new to the fleet. */
async function reportFromNewHost(host: string): Promise<void> {
  const { rolloutEndpoint, rolloutCommit } = fleet.scenario;
  await sendLogs(`http://127.0.0.1:${hub.ports.otlpHttp}`, [
    {
      resource: { 'k8s.cluster.name': host, 'kalypso.host.type': 'k8s-cluster' },
      logs: [
        {
          eventName: 'kalypso.deployment.state',
          time: new Date(),
          attributes: {
            'kalypso.reconciler.name': 'flux-system/catalog',
            'kalypso.reconciler.type': 'flux',
            'kalypso.manifests.endpoint': rolloutEndpoint,
            'vcs.ref.head.revision': `staging@sha1:${rolloutCommit}`,
            'kalypso.deployment.status': 'success',
          },
          body: 'Applied revision',
        },
      ],
    },
  ]);
}

describe('refresh that stays out of the way', () => {
  it('keeps focus and scroll position across a refresh that changes the page, and says when it updated', async () => {
    const page = await open('/', { viewport: { width: 390, height: 640 }, clock: true });
    await page.waitForSelector('table.matrix');
    await loaded(page);
    expect(await page.locator('.refresh-status').textContent()).toMatch(/^Updated \d+ s ago$/);
    const stagingHosts = () => page.locator('.environment-summary li[data-environment="staging"]').textContent();
    const before = await stagingHosts();

    const link = page.locator(`${matrixCell('catalog', 'staging')} a.rollout-link`);
    await link.focus();
    await page.evaluate(() => {
      window.focusedBefore = document.activeElement;
      window.scrollTo(0, 300);
    });
    const scrolled = await page.evaluate(() => window.scrollY);
    expect(scrolled).toBeGreaterThan(0);

    await reportFromNewHost(randomName('aks-staging'));
    await page.clock.runFor(10_000);
    await page.waitForFunction((text) => document.querySelector('.environment-summary li[data-environment="staging"]')?.textContent !== text, before);
    expect(await page.evaluate(() => document.activeElement === window.focusedBefore)).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.classList.contains('rollout-link'))).toBe(true);
    expect(await page.evaluate(() => window.scrollY)).toBe(scrolled);
  });

  it('holds while text is selected, and pauses and resumes at the reader’s word', async () => {
    const page = await open('/', { clock: true });
    await loaded(page);
    let asked = 0;
    page.on('request', (request) => {
      if (request.url().includes('/api/v1/compare')) asked += 1;
    });

    // Select a version as a reader would to copy it.
    await page.evaluate((cell) => {
      const target = document.querySelector(`${cell} .desired-version`)!;
      const range = document.createRange();
      range.selectNodeContents(target);
      document.getSelection()!.removeAllRanges();
      document.getSelection()!.addRange(range);
    }, matrixCell('catalog', 'prod'));
    const selected = await page.evaluate(() => document.getSelection()?.toString());
    expect(selected).toMatch(/^\d+\.\d+\.\d+$/);
    await page.clock.runFor(10_000);
    await expect.poll(() => page.locator('.refresh-status').textContent()).toMatch(/^Held while text is selected · updated \d+ s ago$/);
    expect(asked).toBe(0);
    expect(await page.evaluate(() => document.getSelection()?.toString())).toBe(selected);
    await page.evaluate(() => document.getSelection()!.removeAllRanges());
    await page.clock.runFor(10_000);
    await expect.poll(() => asked).toBe(1);

    const toggle = page.locator('button.refresh-toggle');
    await toggle.click();
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    expect(await toggle.textContent()).toBe('Resume updates');
    await page.clock.runFor(30_000);
    expect(await page.locator('.refresh-status').textContent()).toMatch(/^Updates paused · updated \d+ s ago$/);
    expect(asked).toBe(1);
    // Paused stays paused on the next visit.
    await page.reload();
    await loaded(page);
    asked = 0;
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    await page.clock.runFor(20_000);
    expect(asked).toBe(0);
    await toggle.click();
    await expect.poll(() => asked).toBe(1);
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
  });
});

describe('rollouts one click away', () => {
  it('from a matrix cell: the rollout of its desired commit, naming environment, target, version and endpoint', async () => {
    const page = await open('/');
    await loaded(page);
    await page.click(`${matrixCell('catalog', 'staging')} a.rollout-link`);
    await page.waitForURL((url) => url.pathname === '/rollout');
    const url = new URL(page.url());
    expect(url.searchParams.get('endpoint')).toBe(fleet.scenario.rolloutEndpoint);
    expect(url.searchParams.get('commit')).toBe(fleet.scenario.rolloutCommit);
    await page.waitForSelector('table.targets tbody tr');
    const target = page.locator('table.targets tbody tr');
    expect(await target.count()).toBe(1);
    expect(await target.getAttribute('data-environment')).toBe('staging');
    expect(await target.getAttribute('data-workload')).toBe('catalog');
    const version = await page.locator(`${'table.targets'} td.version`).textContent();
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(await target.locator('td.endpoint').textContent()).toBe(fleet.scenario.rolloutEndpoint);
    expect(await page.locator('.scope .endpoint').textContent()).toBe(fleet.scenario.rolloutEndpoint);
    expect(await page.locator('.scope .commit-id').getAttribute('title')).toBe(fleet.scenario.rolloutCommit);
    // Its subscribers: the staging catalog rollout is still landing on some of them.
    expect(await page.locator('.verdict').textContent()).toMatch(/^Rolling out… — \d+\/\d+ succeeded/);
    await page.screenshot({ path: await artifactPath('rollout-from-matrix'), fullPage: true });
  });

  it('from an environment: the promotion check of its last merge, every target of it', async () => {
    const page = await open('/');
    await loaded(page);
    await page.click('.environment-summary li[data-environment="prod"] a.promote-check');
    await page.waitForURL((url) => url.pathname === '/rollout' && url.searchParams.get('environment') === 'prod');
    await page.waitForSelector('table.targets tbody tr');
    expect(await page.locator('.scope').textContent()).toContain('in environment prod');
    const environments = await page.$$eval('table.targets tbody tr', (rows) => rows.map((row) => row.getAttribute('data-environment')));
    expect(environments.length).toBeGreaterThan(1);
    expect(new Set(environments)).toEqual(new Set(['prod']));
    // Each target opens its own endpoint's rollout.
    await page.locator('table.targets tbody tr').first().locator('td a').click();
    await page.waitForURL((url) => url.searchParams.get('endpoint') !== null);
    await page.waitForSelector('table.targets tbody tr');
    expect(await page.locator('table.targets tbody tr').getAttribute('data-environment')).toBe('prod');
  });

  it('from a host: endpoint, desired against deployed, recent history, and each commit’s rollout', async () => {
    const host = fleet.scenario.driftingHost;
    const page = await open(`/hosts/${host}`);
    await page.waitForSelector('table.reconcilers tbody tr');
    const hello = page.locator('tr[data-reconciler="flux-system/hello-world"]');
    // The drifting host runs an older hello-world than desired: it says so.
    expect(await hello.getAttribute('class')).toContain('off-desired');
    expect(await hello.locator('.badge.drifting').textContent()).toBe('not desired');
    const [deployed, desired] = await Promise.all([hello.locator('td.deployed-version').textContent(), hello.locator('td.desired-version').textContent()]);
    expect(desired).toMatch(/^\d+\.\d+\.\d+not desired$/);
    expect(desired?.startsWith(deployed!)).toBe(false);
    expect(await hello.locator('td.endpoint').textContent()).toBe(endpointOf(HELLO, 'qa'));
    // Its recent history inline, and the way to the rest.
    expect(await page.locator('ol.timeline.recent li.transition').count()).toBe(10);
    expect(await page.locator('a.history-link').getAttribute('href')).toBe(`/history?host=${host}`);
    await page.screenshot({ path: await artifactPath('host-detail'), fullPage: true });

    await hello.locator('a.rollout-link').click();
    await page.waitForURL((url) => url.pathname === '/rollout');
    expect(new URL(page.url()).searchParams.get('endpoint')).toBe(endpointOf(HELLO, 'qa'));
    await page.waitForSelector(`table.subscribers tr[data-host="${host}"]`);
  });

  it('from a Delivery rollout', async () => {
    const page = await open('/delivery');
    await loaded(page);
    await page.waitForSelector('table.rollouts tbody tr');
    const first = page.locator('table.rollouts tbody tr').first();
    const href = await first.locator('a.rollout-link').getAttribute('href');
    const url = new URL(href!, base);
    expect(url.pathname).toBe('/rollout');
    expect(url.searchParams.get('commit')).toMatch(/^[0-9a-f]{40}$/);
    const [environment, version] = await Promise.all([first.getAttribute('data-environment'), first.getAttribute('data-version')]);
    await first.locator('a.rollout-link').click();
    await page.waitForSelector('table.targets tbody tr');
    expect(await page.locator('table.targets tbody tr').getAttribute('data-environment')).toBe(environment);
    expect(await page.locator('table.targets td.version').textContent()).toBe(version);
  });

  it('is explained on the Rollout page itself, for those who open it bare', async () => {
    const page = await open('/rollout');
    await page.waitForSelector('.rollout p');
    expect(await page.locator('.rollout').textContent()).toContain('each cell of the Environments matrix links to the rollout of its desired commit');
  });
});

describe('times and commits', () => {
  it('says "N min ago", with ISO 8601 and the reader’s time zone on hover, and one short commit form', async () => {
    const page = await open(`/hosts/${fleet.scenario.driftingHost}`, { timezoneId: 'Europe/Berlin' });
    await page.waitForSelector('table.reconcilers tbody tr');
    const times = await page.$$eval('time', (elements) => elements.map((element) => ({ text: element.textContent, title: element.getAttribute('title'), datetime: element.getAttribute('datetime') })));
    expect(times.length).toBeGreaterThan(10);
    for (const time of times) {
      expect(time.text).toMatch(/^(\d+ (s|min|h|d) ago|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+01:00)$/);
      expect(time.title).toMatch(/(^|· )\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+01:00 \(Europe\/Berlin\)$/);
      // The same moment as the machine-readable one.
      const iso = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+01:00/.exec(time.title)![0];
      expect(Math.abs(new Date(iso).getTime() - new Date(time.datetime).getTime())).toBeLessThan(1_000);
    }
    const commits = await page.$$eval('.commit-id', (elements) => elements.map((element) => [element.textContent, element.getAttribute('title')]));
    expect(commits.length).toBeGreaterThan(0);
    for (const [text, full] of commits) {
      expect(full).toMatch(/^[0-9a-f]{40}$/);
      expect(text).toBe(full!.slice(0, 10));
    }
  });
});

describe('an empty hub, unknown paths and failures', () => {
  it('says there is no data yet and how to send some — never that all is well', async () => {
    const at = `http://127.0.0.1:${emptyHub.ports.http}`;
    for (const path of ['/', '/hosts', '/drift', '/history', '/delivery']) {
      const page = await open(path, { at });
      await page.waitForSelector('.empty-state');
      expect(await page.locator('.empty-state').textContent(), path).toContain('npm run hub -- demo');
      expect(await page.locator('.all-good').count(), path).toBe(0);
      if (path === '/drift') await page.screenshot({ path: await artifactPath('empty-drift'), fullPage: true });
    }
  });

  it('answers an unknown path with the UI’s not-found page for a browser, JSON for a program', async () => {
    const page = await open('/');
    const response = await page.goto(`${base}/hosts/x/y`);
    expect(response?.status()).toBe(404);
    await page.waitForSelector('h1');
    expect(await page.locator('h1').textContent()).toBe('Page not found');
    expect(await page.locator('main code').textContent()).toBe('/hosts/x/y');
    expect(await page.$$eval('ul.views a', (links) => links.map((link) => link.getAttribute('href')))).toEqual(['/', '/hosts', '/history', '/drift', '/rollout', '/delivery', '/notifications']);
    const program = await fetch(`${base}/hosts/x/y`);
    expect(program.status).toBe(404);
    expect(((await program.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('is no longer busy when a load fails, and the header says the update failed', async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    await page.route('**/api/v1/compare**', (route) => route.fulfill({ status: 500, json: { error: { code: 'internal', message: 'boom' } } }));
    await page.goto(`${base}/`);
    await page.waitForSelector('[role="alert"]');
    expect(await page.locator('[role="alert"]').textContent()).toBe('Could not load: boom');
    expect(await page.locator('#app [aria-busy]').count()).toBe(0);
    await expect.poll(() => page.locator('.refresh-status').textContent()).toMatch(/^Update failed \d+ s ago · retrying$/);
  });
});

describe('at 390 px and at 1440 px', () => {
  const pages = () => [
    ['matrix', '/'],
    ['host', `/hosts/${fleet.scenario.failingHost}`],
    ['drift', '/drift'],
    ['rollout', `/rollout?endpoint=${encodeURIComponent(fleet.scenario.rolloutEndpoint)}&commit=${fleet.scenario.rolloutCommit.slice(0, 10)}`],
    ['delivery', '/delivery'],
    ['history', '/history'],
  ];

  for (const width of [390, 1440]) {
    it(`shows every page without a key column off screen at ${width} px`, async () => {
      for (const [name, path] of pages()) {
        const page = await open(path!, { viewport: { width, height: 900 } });
        await loaded(page);
        // No page scrolls sideways: wide content scrolls in its own box (the matrix) or stacks.
        expect(await page.evaluate(() => document.documentElement.scrollWidth), name).toBeLessThanOrEqual(width);
        // The key cells of every row — what it is (the row header, or a group's label) and its
        // status — are in view, also when the matrix is scrolled sideways.
        await page.evaluate(() => document.querySelector('.matrix-scroll')?.scrollBy(2_000, 0));
        const offScreen = await page.$$eval(
          'table tbody tr',
          (rows, viewport) =>
            rows.flatMap((row) =>
              [row.querySelector('th:not([colspan]), .group-label'), row.querySelector('.badge')]
                .filter((cell) => cell !== null)
                .filter((cell) => {
                  const box = cell.getBoundingClientRect();
                  return box.left < 0 || box.right > viewport;
                })
                .map((cell) => cell.textContent),
            ),
          width,
        );
        expect(offScreen, name).toEqual([]);
        await page.screenshot({ path: await artifactPath(`${name}-${width}`), fullPage: true });
      }
    }, 60_000);
  }
});
