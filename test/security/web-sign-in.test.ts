// A person signs in to the web UI through a real OpenID Connect provider (oidc-provider over HTTPS,
// its own login and consent pages) with the authorization code flow and PKCE, in Chromium under the
// hub's Content-Security-Policy. The session is an HttpOnly, Secure, SameSite=Strict cookie the
// page's scripts cannot read; the API answers the person by the roles and workspaces its claims map
// to; the shared-token sign-in still works beside it.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { artifactPath, launchBrowser } from '../support/browser.ts';
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

const A = { workspace: randomName('ws-a'), application: 'shop', workload: randomName('wl-a'), target: 'main' };
const B = { workspace: randomName('ws-b'), application: 'shop', workload: randomName('wl-b'), target: 'main' };
const API_TOKEN = 'small-install-token-0123456789';

beforeAll(async () => {
  testDb = await createTestDatabase();
  dir = await mkdtemp(path.join(os.tmpdir(), 'kalypso-sign-in-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  issuer = await startTestIssuer({
    audience: 'kalypso-hub',
    webClient: { clientId: 'kalypso-web', redirectUri: `${base}/auth/callback`, postLogoutRedirectUri: `${base}/` },
    people: { alice: { name: 'Alice', groups: ['team-a'] }, mallory: { name: 'Mallory', groups: ['elsewhere'] } },
  });
  const authConfig = await writeAuthConfig(dir, {
    issuer: issuer.issuer,
    audience: 'kalypso-hub',
    rules: [{ when: { groups: 'team-a' }, roles: ['viewer'], workspaces: [A.workspace] }],
    signIn: { clientId: 'kalypso-web' },
  });
  hub = await startTestHub(testDb.url, ['--http-port', String(port), '--auth-config', authConfig, '--api-token', API_TOKEN]);
  const f = new FleetBuilder(hub.database.db);
  // Two environments: the Environments page compares at least two.
  await f.write([f.descriptor(A, 'dev', '1.0.0', randomCommit(), 30), f.descriptor(B, 'dev', '2.0.0', randomCommit(), 20)]);
  await f.write([f.descriptor(A, 'prod', '0.9.0', randomCommit(), 30), f.descriptor(B, 'prod', '1.9.0', randomCommit(), 20)]);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await hub?.stop();
  await issuer?.close();
  await testDb?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function signInAs(login: string): Promise<{ page: Page; authorizations: (string | undefined)[] }> {
  const context = await browser.newContext({ ignoreHTTPSErrors: true });
  const page = await context.newPage();
  const authorizations: (string | undefined)[] = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname.startsWith('/api/v1/')) authorizations.push(request.headers().authorization);
  });
  await page.goto(`${base}/hosts?q=x`);
  await page.locator('dialog#sign-in').getByRole('link', { name: 'Sign in with your organisation' }).click();
  // The provider's own pages: any login name, then consent.
  await page.locator('input[name="login"]').fill(login);
  const password = page.locator('input[name="password"]');
  if ((await password.count()) > 0) await password.fill('anything');
  await page.locator('button[type="submit"]').click();
  await page.locator('button', { hasText: 'Continue' }).click();
  await page.waitForURL((url) => url.origin === base && url.pathname === '/hosts');
  return { page, authorizations };
}

describe('web sign-in through the identity provider', () => {
  it('signs a person in with code + PKCE, keeps the session in an HttpOnly Secure SameSite cookie, and scopes what it reads', async () => {
    const { page, authorizations } = await signInAs('alice');
    // Back where the sign-in started, with its query.
    expect(new URL(page.url()).search).toBe('?q=x');
    await page.goto(`${base}/`);
    await page.waitForSelector('table.matrix tbody tr[data-workload]');
    const text = await page.locator('body').innerText();
    expect(text).toContain(A.workload);
    expect(text).not.toContain(B.workload);
    await page.screenshot({ path: await artifactPath('web-sign-in') });

    const cookies = await page.context().cookies(base);
    const session = cookies.find((cookie) => cookie.name === 'kalypso_session');
    expect(session).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/' });
    expect(cookies.find((cookie) => cookie.name === 'kalypso_sign_in')).toBeUndefined();
    // Scripts cannot read it, and no request carries a token: the cookie speaks for the person.
    expect(await page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie)).not.toContain('kalypso_session');
    expect(authorizations.every((authorization) => authorization === undefined)).toBe(true);
    const who = await page.evaluate(async () => (await fetch('/auth/session')).json());
    expect(who).toEqual({ signedIn: true, name: 'alice', roles: ['viewer'], workspaces: [A.workspace], expiresAt: expect.any(String) });

    // The header names who is signed in; signing out there ends the session (and, once the person
    // confirms at the provider, the provider's: web-session-lifetime.test.ts): the UI asks again.
    expect(await page.locator('header #session').innerText()).toContain('Signed in as alice');
    await page.locator('header #session').getByRole('button', { name: 'Sign out' }).click();
    await page.locator('button', { hasText: 'Yes, sign me out' }).click();
    await page.locator('dialog#sign-in').waitFor({ state: 'visible' });
    expect(await page.locator('header #session').innerText()).toBe('');
    expect(await page.evaluate(async () => (await fetch('/api/v1/environments')).status)).toBe(401);
    await page.context().close();
  });

  it('lets in a person the rules give no role, and the API refuses them with 403', async () => {
    const { page } = await signInAs('mallory');
    expect(await page.evaluate(async () => (await fetch('/api/v1/environments')).status)).toBe(403);
    await page.context().close();
  });

  it('refuses a callback this browser did not start (no sign-in cookie, or a state that does not match)', async () => {
    const forged = await fetch(`${base}/auth/callback?code=stolen&state=guessed`);
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain('no sign-in in progress in this browser');
    const start = await fetch(`${base}/auth/login?return=//evil.example/`, { redirect: 'manual' });
    const location = new URL(start.headers.get('location')!);
    expect(location.origin).toBe(issuer.issuer);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(location.searchParams.get('redirect_uri')).toBe(`${base}/auth/callback`);
    const pending = start.headers.get('set-cookie')!;
    expect(pending).toMatch(/kalypso_sign_in=.*HttpOnly.*Secure.*SameSite=Lax/i);
    const wrongState = await fetch(`${base}/auth/callback?code=x&state=not-the-one`, { headers: { cookie: pending.split(';')[0]! } });
    expect(await wrongState.text()).toContain('state: does not match');
  });

  it('keeps the shared-token sign-in for small installs', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/`);
    const dialog = page.locator('dialog#sign-in');
    await dialog.getByLabel('Token').fill(API_TOKEN);
    await dialog.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector('table.matrix tbody tr[data-workload]');
    expect(await page.locator('body').innerText()).toContain(B.workload);
    await context.close();
  });
});
