// Time to content of each web UI page in headless Chromium against a generated fleet: from the
// start of navigation until the page shows its data (nothing busy, no "Loading…", its main table
// or list drawn) — what a person waits for, API calls, rendering and all.
import type { Page } from 'playwright-core';
import { launchBrowser } from '../test/support/browser.ts';
import { percentile, progress } from './bench-report.ts';
import { fleetEndpoint, type FleetSize, versionCommit } from './fleet.ts';

export interface PageTiming {
  readonly page: string;
  readonly coldMs: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
}

function uiPages(size: FleetSize): { name: string; path: string; ready: string }[] {
  const environment = size.environments[size.environments.length - 1]!;
  const versions = Math.ceil(size.transitionsPerReconciler / 4);
  const commit = versionCommit(versions - 1);
  return [
    { name: 'Environments (matrix, 50 rows)', path: '/', ready: 'table.matrix tbody tr' },
    { name: 'Hosts (first page)', path: '/hosts', ready: 'table.hosts tbody tr' },
    { name: `Hosts of ${environment}, failing`, path: `/hosts?environment=${environment}&status=failure`, ready: 'table.hosts tbody tr' },
    { name: 'A host', path: '/hosts/host-00007', ready: 'table.reconcilers tbody tr' },
    { name: 'History (whole fleet)', path: '/history', ready: '.timeline li.transition' },
    { name: `Drift of ${environment}`, path: `/drift?environment=${environment}`, ready: 'table.drift tbody tr, .all-good' },
    { name: 'Rollout of an endpoint', path: `/rollout?endpoint=${encodeURIComponent(fleetEndpoint(environment, 7, 1))}&commit=${commit}`, ready: 'table.subscribers' },
    { name: `Rollout of ${environment} (promotion check)`, path: `/rollout?environment=${environment}&commit=${commit}`, ready: 'table.subscribers' },
    { name: 'Delivery (30 days)', path: '/delivery', ready: 'table.rollouts' },
  ];
}

async function timeToContent(page: Page, url: string, ready: string): Promise<number> {
  const started = performance.now();
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForSelector(ready, { state: 'attached', timeout: 120_000 });
  await page.waitForFunction(() => {
    // (Runs in the page.)
    const app = (globalThis as unknown as { document: { getElementById(id: string): { querySelector(s: string): unknown; textContent: string | null } | null } }).document.getElementById('app');
    return app !== null && app.querySelector('[aria-busy="true"]') === null && !(app.textContent ?? '').includes('Loading…');
  });
  return performance.now() - started;
}

/** Each page once cold (a new browser tab), then `repetitions` times; at 1440 × 900. */
export async function benchUiPages(baseUrl: string, size: FleetSize, repetitions = 10): Promise<PageTiming[]> {
  const browser = await launchBrowser();
  try {
    const results: PageTiming[] = [];
    for (const { name, path, ready } of uiPages(size)) {
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      const cold = await timeToContent(page, `${baseUrl}${path}`, ready);
      const samples: number[] = [];
      for (let i = 0; i < repetitions; i += 1) samples.push(await timeToContent(page, `${baseUrl}${path}`, ready));
      await context.close();
      results.push({ page: name, coldMs: Math.round(cold), p50Ms: Math.round(percentile(samples, 50)), p95Ms: Math.round(percentile(samples, 95)) });
      progress(`ui ${size.name}: ${name} p50 ${Math.round(percentile(samples, 50))} ms`);
    }
    return results;
  } finally {
    await browser.close();
  }
}
