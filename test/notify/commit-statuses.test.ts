// Commit statuses through the real paths: descriptors and reconciler reports over OTLP, the hub's
// notifier and sender, and a GitHub stand-in that records what it is sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { clusterStates, GitHostStandIn, mergeDescriptors, notificationsFile, PUBLIC_URL, randomOrg, send, startNotifyingHub } from '../support/notify-flow.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

const org = randomOrg();
const ENV = randomName('dev');
const WORKLOADS = [randomName('cart'), randomName('web')];
let standIn: GitHostStandIn;
let testDb: TestDatabase;
let hub: RunningHub;

beforeAll(async () => {
  standIn = new GitHostStandIn();
  await standIn.start();
  testDb = await createTestDatabase();
  hub = await startNotifyingHub(testDb.url, await notificationsFile(standIn, { repos: { github: [`https://github.com/${org.org}/*`] }, webhook: true }));
});

afterAll(async () => {
  await hub?.stop();
  await standIn?.stop();
  await testDb?.drop();
});

const github = (commit: string) => standIn.shown('github', commit, `kalypso/${ENV}`);

describe('commit statuses on GitHub', () => {
  it('posts pending while a merge rolls out, with the counts, then success once every reconciler applied it', async () => {
    const commit = randomCommit();
    const buildCommit = randomCommit();
    const [a, b] = [randomName('aks'), randomName('aks')];
    await send(hub, mergeDescriptors(org, ENV, { commit, version: '1.4.2', buildCommit, workloads: WORKLOADS }));
    await send(hub, [...clusterStates(org, ENV, a, commit, 'in_progress', WORKLOADS), ...clusterStates(org, ENV, b, commit, 'in_progress', WORKLOADS)]);
    await waitFor(() => github(commit).at(-1)?.description === '0/4 applied · 4 in progress', 'a pending status with the counts');
    expect(github(commit).at(-1)).toMatchObject({ state: 'pending', repo: `${org.org}/platform-gitops`, targetUrl: `${PUBLIC_URL}/rollout?environment=${ENV}&commit=${commit}` });

    await send(hub, clusterStates(org, ENV, a, commit, 'success', WORKLOADS));
    await send(hub, clusterStates(org, ENV, b, commit, 'success', WORKLOADS));
    await waitFor(() => github(commit).at(-1)?.state === 'success', 'success');
    expect(github(commit).at(-1)!.description).toBe('4/4 reconcilers on 1.4.2');
    // Never the same state and description twice in a row.
    const shown = github(commit).map((status) => `${status.state} ${status.description}`);
    expect(shown.filter((line, index) => index > 0 && line === shown[index - 1])).toEqual([]);

    // The source commit of the version, on the source repository.
    await waitFor(() => standIn.shown('github', buildCommit, `kalypso/${ENV}`).at(-1)?.state === 'success', 'the source commit’s status');
    expect(standIn.shown('github', buildCommit, `kalypso/${ENV}`).at(-1)).toMatchObject({ repo: `${org.org}/${org.sourceRepo.split('/').at(-1)}`, description: '4/4 reconcilers on 1.4.2' });
  });
});
