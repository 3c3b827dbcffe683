// The headers browsers rely on, on every kind of answer of the HTTP port, and the web UI under its
// Content-Security-Policy: every page and the API reference open in Chromium with no violation
// reported, over a fleet whose names and messages are HTML and script — shown as text, never run.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { UI_PAGES } from '../../src/ui/ui-routes.ts';
import { cspViolations, launchBrowser } from '../support/browser.ts';
import { endpointOf, FleetBuilder } from '../support/known-fleet.ts';
import { randomCommit } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

let testDb: TestDatabase;
let hub: RunningHub;
let browser: Browser;
let base: string;

// What an agent may send: markup and script in every string the UI shows.
const PAYLOADS = {
  host: 'h<img src=x onerror="window.__pwned=1">',
  workspace: 'w<script>window.__pwned=2</script>',
  application: 'a"><svg onload="window.__pwned=3">',
  workload: "wl'><iframe src=javascript:window.__pwned=4>",
  target: 't<style>body{display:none}</style>',
  message: '<b onmouseover="window.__pwned=5">failed</b><script>window.__pwned=6</script>',
} as const;
const WORKLOAD = { workspace: PAYLOADS.workspace, application: PAYLOADS.application, workload: PAYLOADS.workload, target: PAYLOADS.target };
const COMMIT = randomCommit();

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url);
  base = `http://127.0.0.1:${hub.ports.http}`;
  const fleet = new FleetBuilder(hub.database.db);
  await fleet.write([fleet.descriptor(WORKLOAD, 'dev', '1.0.0', COMMIT, 30)]);
  await fleet.write([fleet.state(PAYLOADS.host, WORKLOAD, 'dev', COMMIT, 'failure', 1, PAYLOADS.message)]);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  // Closing the browser fails the suite when any page reported a CSP violation.
  await browser?.close();
  await hub.stop();
  await testDb.drop();
});

async function headersOf(path: string): Promise<Headers> {
  const response = await fetch(`${base}${path}`, { headers: { accept: 'text/html' } });
  await response.arrayBuffer();
  return response.headers;
}

describe('security headers', () => {
  it('sends the UI policy with every page, module and stylesheet', async () => {
    for (const path of ['/', '/hosts', '/drift', '/no-such-page', '/ui/app/main.ts', '/ui/styles.css', '/ui/vendor/idiomorph.js']) {
      const headers = await headersOf(path);
      expect(headers.get('content-security-policy'), path).toBe(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
          "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
      );
      expect(headers.get('x-frame-options'), path).toBe('DENY');
      expect(headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(headers.get('referrer-policy'), path).toBe('no-referrer');
      // Plain HTTP: HSTS would mean nothing (test/security/authentication-and-tls.test.ts sees it over TLS).
      expect(headers.get('strict-transport-security'), path).toBeNull();
    }
  });

  it('lets data answers load nothing, and gives the API reference its own policy', async () => {
    for (const path of ['/api/v1/environments', '/api/v1/openapi.json', '/healthz', '/readyz', '/metrics', '/api/v1/nothing']) {
      const headers = await headersOf(path);
      expect(headers.get('content-security-policy'), path).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(headers.get('x-frame-options'), path).toBe('DENY');
      expect(headers.get('x-content-type-options'), path).toBe('nosniff');
    }
    const docs = await headersOf('/api/docs');
    expect(docs.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(docs.get('content-security-policy')).toContain("script-src 'self'");
    expect(docs.get('content-security-policy')).not.toContain("'unsafe-eval'");
  });

  it('serves a shell with no inline script, and modules that import the vendored package by path', async () => {
    const shell = await (await fetch(`${base}/`)).text();
    expect(shell).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(shell).not.toMatch(/\sstyle=/);
    const dom = await (await fetch(`${base}/ui/app/dom.ts`)).text();
    // Relative: the same module loads under /ui/app/ and under the UI's version (/ui/<version>/app/).
    expect(dom).toContain("from '../vendor/idiomorph.js'");
    expect(dom).not.toMatch(/from ['"]idiomorph['"]/);
  });
});

describe('the web UI under its Content-Security-Policy', () => {
  it('opens every page and the API reference with no violation, and runs none of the fleet’s markup', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const paths = UI_PAGES.map((path) =>
      path === '/hosts/:host'
        ? `/hosts/${encodeURIComponent(PAYLOADS.host)}`
        : path === '/rollout'
          ? `/rollout?endpoint=${encodeURIComponent(endpointOf('dev', WORKLOAD.workload, WORKLOAD.target))}&commit=${COMMIT}`
          : path,
    );
    for (const path of [...paths, '/history?host=' + encodeURIComponent(PAYLOADS.host)]) {
      await page.goto(`${base}${path}`);
      await page.waitForSelector('main h1');
      // The page's data has arrived (or said why not) before we look.
      await page.waitForFunction(() => !(globalThis as unknown as { document: { body: { textContent: string } } }).document.body.textContent.includes('Loading…'));
      expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned), path).toBeUndefined();
    }
    await page.goto(`${base}/hosts`);
    await page.locator('main', { hasText: PAYLOADS.host }).waitFor();
    await page.goto(`${base}/api/docs`);
    await page.waitForSelector('.swagger-ui .info .title');
    await page.waitForSelector('.opblock');
    await page.close();
    expect(cspViolations(browser)).toEqual([]);
  });
});
