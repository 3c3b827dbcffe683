// Notifications seen by a caller scoped to workspaces. Workspaces A and B deploy from one GitOps
// repository (so the environment's commit status concerns both) and from source repositories of
// their own; B's cluster fails. Every post is refused for good, so each message stays undelivered.
// A viewer of A sees the status of A's source commit whole, the shared GitOps status with its
// description (which names B's failing host) and the receiver's answer withheld, nothing of B's own
// source commit — in the API and in the web UI's Notifications view; an admin sees all of it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Notifications } from '../../src/contract/answer-types.ts';
import type { RunningHub } from '../../src/hub.ts';
import { WITHHELD } from '../../src/store/reports/notifications-report.ts';
import { launchBrowser } from '../support/browser.ts';
import { clusterStates, GitHostStandIn, mergeDescriptors, type NotifyOrg, notificationsFile, orgRepos, randomOrg, send, startNotifyingHub } from '../support/notify-flow.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

const orgA = randomOrg('github');
const orgB: NotifyOrg = { ...randomOrg('github'), gitopsRepo: orgA.gitopsRepo };
const ENV = randomName('prod');
const COMMIT = randomCommit();
const WORKLOAD = { a: randomName('api'), b: randomName('billing') };
const HOST = { a: randomName('aks-a'), b: randomName('aks-b') };
const B_NAMES = [orgB.org, WORKLOAD.b, HOST.b];
const TOKENS = { viewerA: 'viewer-of-a-0123456789', admin: 'admin-of-all-0123456789', ingest: 'collectors-0123456789' };
const REFUSAL = 'Resource not accessible by personal access token';

let standIn: GitHostStandIn;
let testDb: TestDatabase;
let hub: RunningHub;
let dir: string;
let browser: Browser;

beforeAll(async () => {
  standIn = new GitHostStandIn();
  await standIn.start();
  testDb = await createTestDatabase();
  dir = await mkdtemp(path.join(os.tmpdir(), 'kalypso-scope-notify-'));
  const tokens = path.join(dir, 'tokens.yaml');
  await writeFile(
    tokens,
    [
      'tokens:',
      `  - { name: viewer-a, token: ${TOKENS.viewerA}, roles: [viewer], workspaces: [${orgA.org}] }`,
      `  - { name: root, token: ${TOKENS.admin}, roles: [admin] }`,
      `  - { name: collectors, token: ${TOKENS.ingest}, roles: [ingest] }`,
    ].join('\n'),
  );
  // Every status post and every event delivery is refused for good.
  standIn.plan('github:post', ...Array.from({ length: 60 }, () => ({ status: 403, body: { message: REFUSAL } })));
  standIn.plan('hook:decisions', ...Array.from({ length: 60 }, () => ({ status: 400, body: { message: 'no such subscription' } })));
  const file = await notificationsFile(standIn, { repos: { github: [...orgRepos(orgA, 'github'), ...orgRepos(orgB, 'github')] }, webhook: true });
  hub = await startNotifyingHub(testDb.url, file, {}, ['--service-tokens', tokens]);
  await send(hub, [
    ...mergeDescriptors(orgA, ENV, { commit: COMMIT, version: '1.0.0', buildCommit: randomCommit(), workloads: [WORKLOAD.a] }),
    ...mergeDescriptors(orgB, ENV, { commit: COMMIT, version: '2.0.0', buildCommit: randomCommit(), workloads: [WORKLOAD.b] }),
  ], TOKENS.ingest);
  await send(hub, [...clusterStates(orgA, ENV, HOST.a, COMMIT, 'success', [WORKLOAD.a]), ...clusterStates(orgB, ENV, HOST.b, COMMIT, 'failure', [WORKLOAD.b])], TOKENS.ingest);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await hub?.stop();
  await standIn?.stop();
  await testDb?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function notifications(token: string): Promise<{ text: string; answer: Notifications }> {
  const response = await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1/notifications`, { headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return { text, answer: JSON.parse(text) as Notifications };
}

const refusedStatuses = (answer: Notifications) => answer.items.filter((item) => item.kind === 'status' && item.state === 'failed');

describe('notifications for a caller scoped to workspaces', () => {
  it('shows the admin every undelivered message, B’s failing host among them', async () => {
    // Settled: the shared GitOps status and B's source status name B's failing host; A's source status says it landed.
    const answer = await waitFor(async () => {
      const { answer: seen } = await notifications(TOKENS.admin);
      const statuses = refusedStatuses(seen);
      return statuses.filter((item) => item.summary.includes(HOST.b)).length >= 2 && statuses.some((item) => item.summary === `kalypso/${ENV} success: 1/1 reconcilers on 1.0.0`)
        ? seen
        : undefined;
    }, 'the settled statuses refused', 20_000);
    expect(answer.items.some((item) => item.kind === 'event' && item.state === 'failed')).toBe(true);
  });

  it('shows a viewer of A the messages about A, withholding what a shared one may name of B', async () => {
    const { text, answer } = await notifications(TOKENS.viewerA);
    for (const name of B_NAMES) expect(text, `names ${name}`).not.toContain(name);
    expect(answer.channels.map((channel) => channel.name)).toEqual(['github-statuses', 'decisions']);
    const statuses = refusedStatuses(answer);
    // A's own source commit, whole, with the receiver's answer.
    expect(statuses).toContainEqual(expect.objectContaining({ summary: `kalypso/${ENV} success: 1/1 reconcilers on 1.0.0`, lastError: `HTTP 403: ${REFUSAL}` }));
    // The environment's GitOps commit, shared with B: which way it went, not what it says.
    expect(statuses).toContainEqual(expect.objectContaining({ summary: `kalypso/${ENV} failure: ${WITHHELD}`, lastError: WITHHELD }));
    // B's source commit is not listed at all: fewer statuses than the admin sees.
    const admin = refusedStatuses((await notifications(TOKENS.admin)).answer);
    const bOnly = admin.filter((item) => item.summary.includes(HOST.b) && item.summary.includes('failure')).length;
    expect(statuses.length).toBeLessThan(admin.length);
    expect(bOnly).toBeGreaterThan(0);
    // The rollout event concerns both: listed, its receiver's answer withheld.
    expect(answer.items.filter((item) => item.kind === 'event' && item.summary.startsWith('io.kalypso.rollout.'))).not.toHaveLength(0);
    for (const item of answer.items.filter((candidate) => candidate.kind === 'event' && candidate.summary.startsWith('io.kalypso.rollout.'))) expect(item.lastError).toBe(WITHHELD);
  });

  it('shows the same in the web UI’s Notifications view', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${hub.ports.http}/notifications`);
    await page.locator('dialog#sign-in').getByLabel('Token').fill(TOKENS.viewerA);
    await page.locator('dialog#sign-in').getByRole('button', { name: 'Sign in' }).click();
    await page.locator('table.undelivered tr[data-state="failed"]').first().waitFor();
    const text = await page.locator('main').innerText();
    expect(text).toContain('1/1 reconcilers on 1.0.0');
    expect(text).toContain(WITHHELD);
    for (const name of B_NAMES) expect(text, `shows ${name}`).not.toContain(name);
    await context.close();
  });
});
