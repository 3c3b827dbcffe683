// A web session lives as long as the ID token it was made from, at most: the roles were mapped from
// its claims, so none outlive its `exp` — the page asks for a sign-in again when it ends, and the
// hub refuses the cookie. Signing out ends the identity provider's session too, through the
// end_session_endpoint its discovery names (OpenID Connect RP-Initiated Logout 1.0): the browser is
// sent there with the ID token as hint, the person confirms, the provider sends it back to the hub,
// and the next sign-in asks for the person's login again. A real provider (oidc-provider), Chromium
// under the hub's CSP.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { launchBrowser } from '../support/browser.ts';
import { FleetBuilder } from '../support/known-fleet.ts';
import { writeAuthConfig } from '../support/auth-config.ts';
import { startTestIssuer, type TestIssuer } from '../support/oidc-issuer.ts';
import { freePort } from '../support/ports.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

let testDb: TestDatabase;
let hub: RunningHub;
let issuer: TestIssuer;
let browser: Browser;
let dir: string;
let base: string;
/** How long the provider's next ID token lives. */
let idTokenSeconds = 3_600;

const A = { workspace: randomName('ws-a'), application: 'shop', workload: randomName('wl-a'), target: 'main' };

beforeAll(async () => {
  testDb = await createTestDatabase();
  dir = await mkdtemp(path.join(os.tmpdir(), 'kalypso-session-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  issuer = await startTestIssuer({
    audience: 'kalypso-hub',
    webClient: { clientId: 'kalypso-web', redirectUri: `${base}/auth/callback`, postLogoutRedirectUri: `${base}/` },
    people: { alice: { name: 'Alice', groups: ['team-a'] } },
    idTokenSeconds: () => idTokenSeconds,
  });
  const authConfig = await writeAuthConfig(dir, {
    issuer: issuer.issuer,
    audience: 'kalypso-hub',
    rules: [{ when: { groups: 'team-a' }, roles: ['viewer'], workspaces: [A.workspace] }],
    signIn: { clientId: 'kalypso-web', sessionDuration: '8h' },
  });
  hub = await startTestHub(testDb.url, ['--http-port', String(port), '--auth-config', authConfig]);
  const f = new FleetBuilder(hub.database.db);
  await f.write([f.descriptor(A, 'dev', '1.0.0', randomCommit(), 30), f.descriptor(A, 'prod', '0.9.0', randomCommit(), 20)]);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await hub?.stop();
  await issuer?.close();
  await testDb?.drop();
  await rm(dir, { recursive: true, force: true });
});

/** Signs in from the front page through the provider's login and consent pages; back on the matrix. */
async function signIn(page: Page): Promise<void> {
  await page.goto(`${base}/`);
  await page.locator('dialog#sign-in').getByRole('link', { name: 'Sign in with your organisation' }).click();
  await page.locator('input[name="login"]').fill('alice');
  const password = page.locator('input[name="password"]');
  if ((await password.count()) > 0) await password.fill('anything');
  await page.locator('button[type="submit"]').click();
  await page.locator('button', { hasText: 'Continue' }).click();
  await page.waitForSelector('table.matrix tbody tr[data-workload]');
}

const apiStatus = (page: Page): Promise<number> => page.evaluate(async () => (await fetch('/api/v1/environments')).status);

describe('the web session', () => {
  it('ends with its ID token, well before sessionDuration: the page asks for a sign-in again and the hub refuses the cookie', async () => {
    idTokenSeconds = 10;
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await signIn(page);
    // The ID token was issued before this, so it expires within 10 s of now.
    const signedIn = Date.now();
    expect(await apiStatus(page)).toBe(200);
    const who = (await page.evaluate(async () => (await fetch('/auth/session')).json())) as { expiresAt: string };
    // The ID token's exp, not 8 hours.
    expect(Date.parse(who.expiresAt)).toBeLessThanOrEqual(signedIn + 10_000);
    const cookie = (await context.cookies(base)).find((candidate) => candidate.name === 'kalypso_session');
    expect(cookie!.expires * 1_000).toBeLessThanOrEqual(signedIn + 10_000);
    expect(await page.locator('header #session').innerText()).toContain('Signed in as alice');

    // Nothing done: at the end the page asks by itself, and says nobody is signed in.
    await page.locator('dialog#sign-in').waitFor({ state: 'visible', timeout: 20_000 });
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(who.expiresAt));
    expect(await page.locator('header #session').innerText()).toBe('');
    expect(await apiStatus(page)).toBe(401);
    expect(await page.evaluate(async () => (await fetch('/auth/session')).json())).toMatchObject({ signedIn: false });
    await context.close();
  }, 45_000);

  it('signs out at the identity provider too: its end-session endpoint with the ID token as hint, then back at the hub, and the next sign-in asks for the login', async () => {
    idTokenSeconds = 3_600;
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await signIn(page);
    const endSession: URL[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.origin === issuer.issuer && url.pathname === '/session/end') endSession.push(url);
    });

    await page.locator('header #session').getByRole('button', { name: 'Sign out' }).click();
    // The provider's page asks the person to confirm.
    await page.locator('button', { hasText: 'Yes, sign me out' }).click();
    await page.waitForURL(`${base}/`);
    await page.locator('dialog#sign-in').waitFor({ state: 'visible' });
    expect(endSession).toHaveLength(1);
    const asked = endSession[0]!.searchParams;
    expect(asked.get('client_id')).toBe('kalypso-web');
    expect(asked.get('post_logout_redirect_uri')).toBe(`${base}/`);
    expect(asked.get('id_token_hint')?.split('.')).toHaveLength(3);
    expect(await apiStatus(page)).toBe(401);

    // The provider forgot the person: signing in again shows its login page.
    await page.locator('dialog#sign-in').getByRole('link', { name: 'Sign in with your organisation' }).click();
    await page.locator('input[name="login"]').waitFor({ state: 'visible' });
    expect(new URL(page.url()).origin).toBe(issuer.issuer);
    await context.close();
  });
});
