// Read access scoped to workspaces: a viewer of workspace A asks every report (and opens every page
// of the web UI) over a fleet where workspace B has names of its own — workspace, application,
// workload, target, a host of its own, an environment of its own, commits — and a host shared by
// both. None of B's names may appear in any answer or page; what is B's alone answers as if it did
// not exist; an admin still sees all of it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { launchBrowser } from '../support/browser.ts';
import { endpointOf, FleetBuilder } from '../support/known-fleet.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

let testDb: TestDatabase;
let hub: RunningHub;
let dir: string;
let browser: Browser;

const A = { workspace: randomName('ws-a'), application: randomName('app-a'), workload: randomName('wl-a'), target: randomName('tgt-a') };
const B = { workspace: randomName('ws-b'), application: randomName('app-b'), workload: randomName('wl-b'), target: randomName('tgt-b') };
// C deploys to one environment only.
const C = { workspace: randomName('ws-c'), application: randomName('app-c'), workload: randomName('wl-c'), target: 'main' };
const HOST_SHARED = randomName('host-shared');
const HOST_A = randomName('host-a');
const HOST_B = randomName('host-b');
const ENV_B = randomName('env-b');
const COMMIT = { aDev: randomCommit(), aProd: randomCommit(), bDev: randomCommit(), bOwn: randomCommit() };
const B_NAMES = [B.workspace, B.application, B.workload, B.target, HOST_B, ENV_B, COMMIT.bDev, COMMIT.bOwn];

const TOKENS = { viewerC: 'viewer-of-c-0123456789', viewerA: 'viewer-of-a-0123456789', pipelineA: 'pipeline-of-a-0123456789', admin: 'admin-of-all-0123456789' };

beforeAll(async () => {
  testDb = await createTestDatabase();
  dir = await mkdtemp(path.join(os.tmpdir(), 'kalypso-scope-'));
  const tokens = path.join(dir, 'tokens.yaml');
  await writeFile(
    tokens,
    [
      'tokens:',
      `  - { name: viewer-a, token: ${TOKENS.viewerA}, roles: [viewer], workspaces: [${A.workspace}] }`,
      `  - { name: pipeline-a, token: ${TOKENS.pipelineA}, roles: [pipeline], workspaces: [${A.workspace}] }`,
      `  - { name: root, token: ${TOKENS.admin}, roles: [admin] }`,
      `  - { name: viewer-c, token: ${TOKENS.viewerC}, roles: [viewer], workspaces: [${C.workspace}] }`,
    ].join('\n'),
  );
  hub = await startTestHub(testDb.url, ['--service-tokens', tokens]);
  const f = new FleetBuilder(hub.database.db);
  await f.write([f.descriptor(A, 'dev', '1.0.0', COMMIT.aDev, 60), f.descriptor(B, 'dev', '9.0.0', COMMIT.bDev, 50)]);
  await f.write([f.descriptor(A, 'prod', '0.9.0', COMMIT.aProd, 40), f.descriptor(B, ENV_B, '9.0.1', COMMIT.bOwn, 30)]);
  await f.write([f.descriptor(C, 'prod', '3.0.0', randomCommit(), 20)]);
  await f.write([
    f.state(HOST_SHARED, A, 'dev', COMMIT.aDev, 'success', 5),
    f.state(HOST_SHARED, B, 'dev', COMMIT.bDev, 'failure', 4, `${B.workload} failed`),
    f.state(HOST_A, A, 'prod', COMMIT.aProd, 'in_progress', 3),
    f.state(HOST_B, B, ENV_B, COMMIT.bOwn, 'success', 2),
  ]);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await hub?.stop();
  await testDb?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function get(pathAndQuery: string, token: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1${pathAndQuery}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, text: await response.text() };
}

const READS = [
  '/environments',
  '/environments/dev/state',
  '/environments/prod/state',
  '/hosts',
  `/hosts/${HOST_SHARED}/state`,
  `/hosts/${HOST_A}/state`,
  '/history',
  '/history?environment=dev',
  `/history?host=${HOST_SHARED}`,
  '/compare?environments=dev,prod',
  '/drift',
  '/drift?environment=dev',
  '/metrics/delivery',
  `/metrics/delivery?host=${HOST_SHARED}`,
  '/notifications',
];

describe('workspace scoping', () => {
  it('answers every report to a viewer of A with A’s rows and none of B’s names', async () => {
    for (const read of READS) {
      const answer = await get(read, TOKENS.viewerA);
      expect(answer.status, `${read}: ${answer.text}`).toBe(200);
      for (const name of B_NAMES) expect(answer.text, `${read} names ${name}`).not.toContain(name);
    }
    expect((await get('/environments/dev/state', TOKENS.viewerA)).text).toContain(A.workload);
    // Counted over A alone: dev has one target of A, pulled by one host, whose reconciler succeeded.
    const environments = JSON.parse((await get('/environments', TOKENS.viewerA)).text);
    expect(environments.items.map((environment: { name: string }) => environment.name)).toEqual(['dev', 'prod']);
    expect(environments.items[0]).toMatchObject({ deploymentTargets: 1, hosts: 1, reconcilers: { total: 1, succeeded: 1, failed: 0 }, latestAssignment: { commit: COMMIT.aDev } });
    expect((await get('/hosts', TOKENS.viewerA)).text).toContain(HOST_SHARED);
    const shared = JSON.parse((await get(`/hosts/${HOST_SHARED}/state`, TOKENS.viewerA)).text);
    expect(shared.reconcilers.map((reconciler: { reconciler: string }) => reconciler.reconciler)).toEqual([`flux-system/${A.workload}`]);
  });

  it('answers what is B’s alone as if it did not exist, and refuses to filter by B', async () => {
    const missing: [string, number, string][] = [
      [`/environments/${ENV_B}/state`, 404, `environment "${ENV_B}" not found`],
      [`/hosts/${HOST_B}/state`, 404, `host "${HOST_B}" not found`],
      [`/compare?environments=dev,${ENV_B}`, 404, `environment "${ENV_B}" not found`],
      [`/drift?environment=${ENV_B}`, 404, `environment "${ENV_B}" not found`],
      [`/history?workspace=${B.workspace}`, 403, `workspace: "${B.workspace}" is not among the workspaces you may read`],
    ];
    for (const [read, status, message] of missing) {
      const answer = await get(read, TOKENS.viewerA);
      expect(answer.status, read).toBe(status);
      expect(JSON.parse(answer.text).error.message).toBe(message);
    }
  });

  it('scopes the gate: A’s environment gate counts only A’s subscribers; B’s endpoint is unknown', async () => {
    const gate = await get(`/deployment-state?environment=dev&commit=${COMMIT.aDev}`, TOKENS.pipelineA);
    expect(gate.status, gate.text).toBe(200);
    const state = JSON.parse(gate.text);
    expect(state.subscribers.map((subscriber: { host: string }) => subscriber.host)).toEqual([HOST_SHARED]);
    expect(state).toMatchObject({ total: 1, succeeded: 1, failed: 0, settled: true });
    for (const name of B_NAMES) expect(gate.text).not.toContain(name);
    const other = await get(`/deployment-state?manifestsEndpoint=${encodeURIComponent(endpointOf('dev', B.workload, B.target))}&commit=${COMMIT.bDev}`, TOKENS.pipelineA);
    expect(other.status).toBe(404);
    expect(other.text).not.toContain(COMMIT.bDev);
    // The pipeline role asks the gate, not the reports.
    expect((await get('/environments', TOKENS.pipelineA)).status).toBe(403);
  });

  it('shows an admin every workspace', async () => {
    const environments = await get('/environments', TOKENS.admin);
    expect(environments.text).toContain(ENV_B);
    expect((await get(`/hosts/${HOST_B}/state`, TOKENS.admin)).status).toBe(200);
    const dev = JSON.parse((await get('/environments/dev/state', TOKENS.admin)).text);
    expect(dev.items.map((target: { workspace: string }) => target.workspace).sort()).toEqual([A.workspace, B.workspace].sort());
    const shared = JSON.parse((await get(`/hosts/${HOST_SHARED}/state`, TOKENS.admin)).text);
    expect(shared.reconcilers).toHaveLength(2);
  });

  it('shows a viewer of A no name of B on any page of the web UI', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const base = `http://127.0.0.1:${hub.ports.http}`;
    await page.goto(`${base}/`);
    await page.locator('dialog#sign-in').getByLabel('Token').fill(TOKENS.viewerA);
    await page.locator('dialog#sign-in').getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector('table.matrix tbody tr[data-workload]');
    const pages = ['/', '/hosts', `/hosts/${encodeURIComponent(HOST_SHARED)}`, '/history', '/drift', '/delivery', '/notifications', `/rollout?environment=dev&commit=${COMMIT.aDev}`];
    for (const view of pages) {
      await page.goto(`${base}${view}`);
      await page.waitForLoadState('networkidle');
      const text = await page.locator('body').innerText();
      expect(text, view).not.toContain('Loading…');
      for (const name of B_NAMES) expect(text, `${view} shows ${name}`).not.toContain(name);
    }
    await page.goto(`${base}/`);
    await page.waitForSelector('table.matrix tbody tr[data-workload]');
    expect(await page.locator('body').innerText()).toContain(A.workload);
    await context.close();
  });

  it('shows a viewer whose workspace is in one environment its matrix (compare needs two: the page reads the environment’s state)', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${hub.ports.http}/`);
    await page.locator('dialog#sign-in').getByLabel('Token').fill(TOKENS.viewerC);
    await page.locator('dialog#sign-in').getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector(`table.matrix tbody tr[data-workload="${C.workload}"]`);
    const text = await page.locator('main').innerText();
    expect(text).toContain('3.0.0');
    expect(text).not.toContain(A.workload);
    expect(await page.locator('main .error').count()).toBe(0);
    await context.close();
  });
});
