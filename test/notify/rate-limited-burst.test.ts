// A burst of rollouts against a provider's secondary rate limit (GitHub's stand-in refuses more
// than 4 posts in 3 s with 403 and Retry-After): every final state arrives, progress that was
// overtaken while waiting is coalesced away, and nothing is posted twice in a row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { clusterStates, FAST_NOTIFY, GitHostStandIn, mergeDescriptors, notificationsFile, orgRepos, randomOrg, send, startNotifyingHub } from '../support/notify-flow.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

const org = randomOrg('github');
let standIn: GitHostStandIn;
let testDb: TestDatabase;
let hub: RunningHub;

beforeAll(async () => {
  standIn = new GitHostStandIn();
  await standIn.start();
  testDb = await createTestDatabase();
  hub = await startNotifyingHub(testDb.url, await notificationsFile(standIn, { repos: { github: orgRepos(org, 'github') } }), { notifyTuning: FAST_NOTIFY });
});

afterAll(async () => {
  await hub?.stop();
  await standIn?.stop();
  await testDb?.drop();
});

describe('under a secondary rate limit', () => {
  it('delivers every final state, waiting as told, without repeating one', async () => {
    standIn.rateLimit('github:post', 4, 3_000);
    const workloads = [randomName('api')];
    const merges = Array.from({ length: 6 }, () => ({ environment: randomName('env'), commit: randomCommit(), cluster: randomName('aks') }));
    for (const { environment, commit, cluster } of merges) {
      await send(hub, mergeDescriptors(org, environment, { commit, version: '2.0.0', buildCommit: randomCommit(), workloads }));
      await send(hub, clusterStates(org, environment, cluster, commit, 'in_progress', workloads));
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    for (const { environment, commit, cluster } of merges) await send(hub, clusterStates(org, environment, cluster, commit, 'success', workloads));
    const shown = (environment: string, commit: string) => standIn.shown('github', commit, `kalypso/${environment}`).map((status) => `${status.state}: ${status.description}`);
    await waitFor(() => merges.every(({ environment, commit }) => shown(environment, commit).at(-1)?.startsWith('success') === true), 'every final state', 60_000);
    // The source commits' statuses too: nothing left waiting.
    await waitFor(async () => {
      const answer = (await (await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1/notifications`)).json()) as { channels: { queued: number }[] };
      return answer.channels.every((channel) => channel.queued === 0);
    }, 'the queue drained', 60_000);
    for (const { environment, commit } of merges) {
      const lines = shown(environment, commit);
      expect(lines.filter((line, index) => index > 0 && line === lines[index - 1])).toEqual([]);
    }
    const refused = standIn.requests.filter((request) => request.method === 'POST').length - standIn.statuses.length;
    expect(refused).toBeGreaterThan(0);
    const metrics = await (await fetch(`http://127.0.0.1:${hub.ports.http}/metrics`)).text();
    expect(metrics).toContain(`kalypso_notifications_retried_total{channel="github-statuses",kind="status",reason="rate_limited"} ${refused}`);
    expect(metrics).toContain('kalypso_notifications_queued{channel="github-statuses"} 0');
  }, 90_000);
});
