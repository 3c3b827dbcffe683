// How the web UI loads: the shell names every file under the UI's version and preloads every
// module, which the browser keeps for good (a second load asks the hub for none of them); the
// unversioned paths are revalidated by ETag; and pages ask for what they need at once rather than
// one answer after another (the matrix asks /compare beside /environments, the drift is drawn
// before the environments' counts arrive).
import type { Browser, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { launchBrowser, type PageGlobals } from '../support/browser.ts';
import { ENVIRONMENTS, writeKnownFleet } from '../support/known-fleet.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

let testDb: TestDatabase;
let hub: RunningHub;
let browser: Browser;
let page: Page;
let base: string;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url);
  await writeKnownFleet(hub.database.db);
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

/** The page's resource timing: each file's path and the bytes that came over the network for it (0: from the cache). */
interface Loaded {
  readonly path: string;
  readonly transferSize: number;
  readonly startTime: number;
  readonly responseEnd: number;
}
const loaded = (): Promise<Loaded[]> =>
  page.evaluate(() =>
    (globalThis as unknown as { performance: { getEntriesByType(type: string): { name: string; transferSize: number; startTime: number; responseEnd: number }[] } }).performance
      .getEntriesByType('resource')
      .map((entry) => ({ path: new URL(entry.name).pathname, transferSize: entry.transferSize, startTime: entry.startTime, responseEnd: entry.responseEnd })),
  );

function shellFiles(shell: string): { styles: string; entry: string; preload: string[] } {
  return {
    styles: /<link rel="stylesheet" href="([^"]+)">/.exec(shell)![1]!,
    entry: /<script type="module" src="([^"]+)"><\/script>/.exec(shell)![1]!,
    preload: [...shell.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((match) => match[1]!),
  };
}

describe('the shell and its files', () => {
  it('names every file under one version and preloads every module, each kept for good', async () => {
    const { styles, entry, preload } = shellFiles(await (await fetch(`${base}/hosts`)).text());
    const version = /^\/ui\/([0-9a-f]{12})\/styles\.css$/.exec(styles)?.[1];
    expect(version).toBeDefined();
    expect(entry).toBe(`/ui/${version}/app/main.ts`);
    expect(preload).toContain(`/ui/${version}/app/dom.ts`);
    expect(preload).toContain(`/ui/${version}/app/pages/matrix-page.ts`);
    expect(preload).toContain(`/ui/${version}/vendor/idiomorph.js`);
    for (const path of [styles, entry, ...preload]) {
      expect(path.startsWith(`/ui/${version}/`), path).toBe(true);
      const response = await fetch(`${base}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type'), path).toBe(path.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8');
      expect(response.headers.get('cache-control'), path).toBe('public, max-age=31536000, immutable');
      expect((await response.text()).length, path).toBeGreaterThan(0);
    }
  });

  it('loads in the browser only the files the shell names, and the second time none from the hub', async () => {
    const { styles, entry, preload } = shellFiles(await (await fetch(`${base}/`)).text());
    await page.goto(`${base}/history`);
    await page.waitForSelector('.timeline li');
    const first = (await loaded()).filter((entry) => entry.path.startsWith('/ui/'));
    // Every module the page imports was preloaded: none waited for the one importing it.
    expect(first.map((entry) => entry.path).sort()).toEqual([styles, entry, ...preload].sort());
    await page.goto(`${base}/history`);
    await page.waitForSelector('.timeline li');
    const second = (await loaded()).filter((entry) => entry.path.startsWith('/ui/'));
    expect(second.length).toBe(first.length);
    expect(second.filter((entry) => entry.transferSize > 0).map((entry) => entry.path)).toEqual([]);
  });

  it('revalidates the shell and the unversioned paths by ETag, and answers another version’s path with today’s file, revalidated', async () => {
    const { entry } = shellFiles(await (await fetch(`${base}/`)).text());
    for (const path of ['/', '/drift', '/ui/app/main.ts', '/ui/styles.css', '/ui/vendor/idiomorph.js']) {
      const response = await fetch(`${base}${path}`);
      await response.arrayBuffer();
      expect(response.headers.get('cache-control'), path).toBe('no-cache');
      const etag = response.headers.get('etag');
      expect(etag, path).toMatch(/^"[0-9a-f]{12}"$/);
      const again = await fetch(`${base}${path}`, { headers: { 'if-none-match': etag! } });
      expect(again.status, path).toBe(304);
    }
    const current = await (await fetch(`${base}${entry}`)).text();
    const other = await fetch(`${base}/ui/000000000000/app/main.ts`);
    expect(other.headers.get('cache-control')).toBe('no-cache');
    expect(await other.text()).toBe(current);
    expect((await fetch(`${base}/ui/app/no-such-module.ts`)).status).toBe(404);
    expect((await fetch(`${base}/ui/app/../hub.ts`)).status).toBe(404);
  });
});

/** Holds every answer of a path until released: what the page does meanwhile shows what waits for it. */
async function hold(path: string): Promise<{ release(): void; asked: Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let asked!: () => void;
  const wasAsked = new Promise<void>((resolve) => (asked = resolve));
  await page.route(
    (url) => url.pathname === path,
    async (route: Route) => {
      asked();
      await released;
      await route.continue();
    },
  );
  return { release, asked: wasAsked };
}

const headers = () => page.$$eval('table.matrix thead th', (cells) => cells.map((cell) => cell.textContent));

describe('pages ask at once', () => {
  it('the matrix asks for its rows beside the environments once the tab has seen their names, and follows new names', async () => {
    await page.goto(`${base}/`);
    await page.waitForSelector('table.matrix tbody tr');
    expect(await headers()).toEqual(['Workload / target', ...ENVIRONMENTS]);

    const environments = await hold('/api/v1/environments');
    const compare = page.waitForRequest((request) => new URL(request.url()).pathname === '/api/v1/compare');
    await page.goto(`${base}/`);
    await environments.asked;
    // Asked while /environments is still unanswered.
    expect(new URL((await compare).url()).searchParams.get('environments')).toBe(ENVIRONMENTS.join(','));
    environments.release();
    await page.waitForSelector('table.matrix tbody tr');
    expect(await headers()).toEqual(['Workload / target', ...ENVIRONMENTS]);
    await page.unroute((url) => url.pathname === '/api/v1/environments');

    // Names this tab remembers wrongly: the rows are asked again by the right ones.
    await page.evaluate(() => (globalThis as unknown as { sessionStorage: { setItem(key: string, value: string): void } }).sessionStorage.setItem('kalypso-environment-names', '["dev","gone"]'));
    const asked: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname === '/api/v1/compare') asked.push(url.searchParams.get('environments') ?? '');
    });
    await page.goto(`${base}/`);
    await page.waitForSelector('table.matrix tbody tr');
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).document.querySelector('[aria-busy="true"]') === null);
    expect(await headers()).toEqual(['Workload / target', ...ENVIRONMENTS]);
    expect(asked).toEqual(['dev,gone', ENVIRONMENTS.join(',')]);
  });

  it('the drift page draws the drift before the environments answer, and fills its filter when they do', async () => {
    const environments = await hold('/api/v1/environments');
    await page.goto(`${base}/drift`);
    await environments.asked;
    await page.waitForSelector('table.drift tbody tr');
    expect(await page.locator('select[name="environment"] option').count()).toBe(1);
    environments.release();
    await page.waitForFunction((count) => (globalThis as unknown as PageGlobals).document.querySelectorAll('select[name="environment"] option').length === count, ENVIRONMENTS.length + 1);
  });
});
