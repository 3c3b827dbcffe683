// The web UI against a hub that requires an API token: it asks for the token once, says when the
// hub refused it, sends it with every request, and forgets it with the tab.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { artifactPath, launchBrowser } from '../support/browser.ts';
import { writeKnownFleet } from '../support/known-fleet.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

let testDb: TestDatabase;
let hub: RunningHub;
let browser: Browser;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url, ['--api-token', 'ui-token']);
  await writeKnownFleet(hub.database.db);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await hub.stop();
  await testDb.drop();
});

describe('web UI with an API token', () => {
  it('asks for the token, refuses a wrong one, then shows the fleet with every request authorized', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const authorizations: (string | undefined)[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/api/v1/')) authorizations.push(request.headers().authorization);
    });
    await page.goto(`http://127.0.0.1:${hub.ports.http}/`);
    const dialog = page.locator('dialog#sign-in');
    await dialog.waitFor({ state: 'visible' });
    expect(await page.locator('main .error').textContent()).toContain('bearer token');
    expect(await dialog.textContent()).not.toContain('refused');
    await page.screenshot({ path: await artifactPath('api-token-dialog') });

    await dialog.getByLabel('Token').fill('not-the-token');
    await dialog.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('dialog#sign-in', { hasText: 'refused' }).waitFor({ state: 'visible' });

    await page.locator('dialog#sign-in').getByLabel('Token').fill('ui-token');
    await page.locator('dialog#sign-in').getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector('table.matrix tbody tr[data-workload]');
    expect(await page.locator('dialog#sign-in').count()).toBe(0);
    expect(authorizations.at(-1)).toBe('Bearer ui-token');

    // Within the tab the token is remembered across pages…
    authorizations.length = 0;
    await page.goto(`http://127.0.0.1:${hub.ports.http}/hosts`);
    await page.waitForSelector('table tbody tr');
    expect(authorizations.length).toBeGreaterThan(0);
    expect(new Set(authorizations)).toEqual(new Set(['Bearer ui-token']));
    // …and a new tab asks again (sessionStorage, not a cookie).
    const other = await context.newPage();
    await other.goto(`http://127.0.0.1:${hub.ports.http}/`);
    await other.locator('dialog#sign-in').waitFor({ state: 'visible' });
    await context.close();
  });
});
