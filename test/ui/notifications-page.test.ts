// The Notifications view in Chromium: the channels of the notifications file with their queues,
// and a status the provider refused for good, with the provider's own words.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { launchBrowser } from '../support/browser.ts';
import { clusterStates, GitHostStandIn, mergeDescriptors, notificationsFile, orgRepos, randomOrg, send, startNotifyingHub } from '../support/notify-flow.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

const org = randomOrg('github');
let standIn: GitHostStandIn;
let testDb: TestDatabase;
let hub: RunningHub;
let browser: Browser;

beforeAll(async () => {
  standIn = new GitHostStandIn();
  await standIn.start();
  testDb = await createTestDatabase();
  hub = await startNotifyingHub(testDb.url, await notificationsFile(standIn, { repos: { github: orgRepos(org, 'github') }, webhook: true }));
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await hub?.stop();
  await standIn?.stop();
  await testDb?.drop();
});

describe('the Notifications view', () => {
  it('lists the channels and the messages refused for good, with the receiver’s answer and no secret', async () => {
    const environment = randomName('prod');
    const commit = randomCommit();
    const workloads = [randomName('api')];
    // Every post of this environment's statuses is refused: the token cannot write to the repository.
    for (let i = 0; i < 4; i += 1) standIn.plan('github:post', { onlyIf: environment, status: 403, body: { message: 'Resource not accessible by personal access token' } });
    await send(hub, mergeDescriptors(org, environment, { commit, version: '9.9.9', buildCommit: randomCommit(), workloads }));
    await send(hub, clusterStates(org, environment, randomName('aks'), commit, 'success', workloads));
    await waitFor(async () => {
      const answer = (await (await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1/notifications`)).json()) as { items: { state: string }[] };
      return answer.items.some((item) => item.state === 'failed');
    }, 'a refused status');

    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${hub.ports.http}/notifications`);
    await page.locator('table.channels tr[data-channel="github-statuses"]').waitFor();
    expect(await page.locator('nav a[aria-current="page"]').textContent()).toBe('Notifications');
    expect(await page.locator('table.channels tbody tr').allTextContents()).toEqual([
      expect.stringContaining('GitHub statuses'),
      expect.stringContaining('CloudEvents webhook'),
    ]);
    const refused = page.locator('table.undelivered tr[data-state="failed"]').first();
    expect(await refused.textContent()).toContain('HTTP 403: Resource not accessible by personal access token');
    expect(await refused.textContent()).toContain(`kalypso/${environment} success`);
    const text = await page.locator('main').textContent();
    for (const secret of [...standIn.tokens.values(), ...standIn.secrets.values()]) expect(text).not.toContain(secret);
    expect(text).not.toContain('/hooks/');
    await page.close();
  });
});
