// Every way out, through the real paths: GitLab and Azure DevOps statuses in their own words,
// CloudEvents to a webhook that checks signatures, and what the sender does when a receiver fails —
// a 500 and a rate limit retried after the wait and not before, a permanent refusal given up on,
// visible in the API and /metrics, with no token in sight.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { clusterStates, GitHostStandIn, mergeDescriptors, notificationsFile, orgRepos, PUBLIC_URL, randomOrg, send, startNotifyingHub } from '../support/notify-flow.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

const github = randomOrg('github');
const gitlab = randomOrg('gitlab');
const azure = randomOrg('azure');
let standIn: GitHostStandIn;
let testDb: TestDatabase;
let hub: RunningHub;

beforeAll(async () => {
  standIn = new GitHostStandIn();
  await standIn.start();
  testDb = await createTestDatabase();
  const file = await notificationsFile(standIn, {
    repos: { github: orgRepos(github, 'github'), gitlab: orgRepos(gitlab, 'gitlab'), azure: orgRepos(azure, 'azure') },
    webhook: true,
  });
  hub = await startNotifyingHub(testDb.url, file);
});

afterAll(async () => {
  await hub?.stop();
  await standIn?.stop();
  await testDb?.drop();
});

interface Merge {
  readonly org: ReturnType<typeof randomOrg>;
  readonly environment: string;
  readonly commit: string;
  /** The source commit the version was built from: it gets statuses too, on the same channel. */
  readonly buildCommit: string;
  readonly clusters: readonly string[];
  readonly workloads: readonly string[];
}

/** A merge to `environment`, its two clusters applying it (in progress). */
async function merge(org: ReturnType<typeof randomOrg>, environment: string): Promise<Merge> {
  const commit = randomCommit();
  const buildCommit = randomCommit();
  const workloads = [randomName('api')];
  const clusters = [randomName('aks'), randomName('aks')];
  await send(hub, mergeDescriptors(org, environment, { commit, version: '2.0.1', buildCommit, workloads }));
  await send(hub, clusters.flatMap((cluster) => clusterStates(org, environment, cluster, commit, 'in_progress', workloads)));
  return { org, environment, commit, buildCommit, clusters, workloads };
}

/** Each cluster reports how it ended. */
async function finish(merged: Merge, outcome: readonly ('success' | 'failure' | 'in_progress')[]): Promise<void> {
  for (const [index, cluster] of merged.clusters.entries()) {
    await send(hub, clusterStates(merged.org, merged.environment, cluster, merged.commit, outcome[index]!, merged.workloads));
  }
}

async function api(path: string): Promise<any> {
  const response = await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1${path}`);
  expect(response.status).toBe(200);
  return await response.json();
}

describe('GitLab', () => {
  it('posts running then success on the project by its path, with the branch as ref; a running over a running is already shown', async () => {
    const environment = randomName('qa');
    const merged = await merge(gitlab, environment);
    const { commit } = merged;
    const shown = () => standIn.shown('gitlab', commit, `kalypso/${environment}`);
    await waitFor(() => shown().length > 0, 'a status on GitLab');
    await finish(merged, ['success', 'in_progress']);
    await finish(merged, ['success', 'success']);
    await waitFor(() => shown().at(-1)?.state === 'success', 'success on GitLab');
    expect(shown()[0]).toMatchObject({ state: 'running', repo: `${gitlab.org}/platform/platform-gitops`, ref: environment });
    expect(shown().at(-1)).toMatchObject({ description: '2/2 reconcilers on 2.0.1', ref: environment, targetUrl: `${PUBLIC_URL}/rollout?environment=${environment}&commit=${commit}` });
    // Progress while running: GitLab keeps the job running and says so with a 400; nothing is refused for good.
    expect((await api('/notifications')).items.filter((item: any) => item.channel === 'gitlab-statuses' && item.state === 'failed')).toEqual([]);
  });
});

describe('Azure DevOps', () => {
  it('posts pending then failed with the genre kalypso and the environment as name, naming the failing host', async () => {
    const environment = randomName('prod');
    const merged = await merge(azure, environment);
    const { commit, clusters } = merged;
    const shown = () => standIn.statuses.filter((status) => status.provider === 'azure' && status.commit === commit);
    await waitFor(() => shown().length > 0, 'a status on Azure DevOps');
    await finish(merged, ['success', 'failure']);
    await waitFor(() => shown().at(-1)?.state === 'failed', 'failed on Azure DevOps');
    expect(JSON.parse(shown().at(-1)!.context)).toEqual({ name: environment, genre: 'kalypso' });
    expect(shown().at(-1)).toMatchObject({ repo: `${azure.org}/platform/platform-gitops`, description: `1/2 applied · 1 failed (${clusters[1]})` });
    expect(shown()[0]!.state).toBe('pending');
  });
});

describe('webhooks', () => {
  it('sends signed CloudEvents in structured mode: progress, then success with the gate’s counts', async () => {
    const environment = randomName('stage');
    const merged = await merge(github, environment);
    const { commit } = merged;
    const events = () => standIn.events.filter((received) => received.event.subject === `${environment}/${commit}` && received.answered === 202);
    await waitFor(() => events().length > 0, 'a first event');
    await finish(merged, ['success', 'success']);
    await waitFor(() => events().some((received) => received.event.type === 'io.kalypso.rollout.succeeded'), 'a rollout.succeeded event');
    for (const received of events()) {
      expect(received.signatureValid).toBe(true);
      expect(received.contentType).toBe('application/cloudevents+json; charset=utf-8');
      expect(received.event).toMatchObject({ specversion: '1.0', source: PUBLIC_URL });
    }
    expect(events()[0]!.event.type).toBe('io.kalypso.rollout.progressed');
    expect(events().at(-1)!.event.data).toEqual({
      environment,
      commit,
      state: 'success',
      total: 2,
      succeeded: 2,
      failed: 0,
      inProgress: 0,
      stale: 0,
      description: '2/2 reconcilers on 2.0.1',
      url: `${PUBLIC_URL}/rollout?environment=${environment}&commit=${commit}`,
    });
  });

  it('says a converged rollout regressed when a cluster fails it afterwards', async () => {
    const environment = randomName('prod');
    const merged = await merge(github, environment);
    await finish(merged, ['success', 'success']);
    const { commit, clusters, workloads } = merged;
    const types = () => standIn.events.filter((received) => received.event.subject === `${environment}/${commit}`).map((received) => received.event.type);
    await waitFor(() => types().includes('io.kalypso.rollout.succeeded'), 'success');
    await send(hub, clusterStates(github, environment, clusters[0]!, commit, 'failure', workloads));
    await waitFor(() => types().includes('io.kalypso.rollout.regressed'), 'a rollout.regressed event');
    await waitFor(() => standIn.shown('github', commit, `kalypso/${environment}`).at(-1)?.state === 'failure', 'the status back to failure');
  });
});

describe('when a receiver fails', () => {
  it('retries a 500, keeping the event’s id and bytes, and a rate-limited status only after the reset', async () => {
    const environment = randomName('dev');
    standIn.plan('hook:decisions', { status: 500, onlyIf: environment });
    const reset = Math.ceil(Date.now() / 1_000) + 2;
    standIn.plan('github:post', { onlyIf: environment, status: 403, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) }, body: { message: 'API rate limit exceeded for installation ID 1.' } });
    const posted = () => standIn.requests.filter((request) => request.method === 'POST' && request.path.startsWith('/github/'));
    const before = posted().length;
    const merged = await merge(github, environment);
    await finish(merged, ['success', 'success']);
    const { commit, buildCommit } = merged;
    await waitFor(() => standIn.shown('github', commit, `kalypso/${environment}`).at(-1)?.state === 'success', 'success after the rate limit', 20_000);
    // The refused post, then nothing on the channel until the reset. Only this merge's posts, on its
    // GitOps commit and on its source commit: another test's environment may still be posting on the
    // same channel, and whichever of the two commits is posted first gets the 403 (seen once in a
    // full run: the source commit's, and the GitOps commit's one post came after the reset).
    const after = posted()
      .slice(before)
      .filter((request) => request.path.includes(commit) || request.path.includes(buildCommit));
    expect(after.length).toBeGreaterThanOrEqual(2);
    expect(after[1]!.at).toBeGreaterThanOrEqual(reset * 1_000);

    const hook = () => standIn.events.filter((received) => received.event.subject === `${environment}/${commit}`);
    await waitFor(() => hook().some((received) => received.event.type === 'io.kalypso.rollout.succeeded' && received.answered === 202), 'the events');
    // The event refused with a 500 came again: the same id, the same bytes, the same signature.
    const refused = hook().find((received) => received.answered === 500)!;
    const again = hook().filter((received) => received.event.id === refused.event.id);
    expect(again.map((received) => received.answered)).toEqual([500, 202]);
    expect(again[1]!.body).toBe(refused.body);
    const metrics = await (await fetch(`http://127.0.0.1:${hub.ports.http}/metrics`)).text();
    expect(metrics).toMatch(/kalypso_notifications_retried_total\{channel="github-statuses",kind="status",reason="rate_limited"\} [1-9]/);
    expect(metrics).toMatch(/kalypso_notifications_retried_total\{channel="decisions",kind="event",reason="error"\} [1-9]/);
    expect(metrics).toMatch(/kalypso_notifications_sent_total\{channel="decisions",kind="event"\} [1-9]/);
  });

  it('gives up on a permanent refusal, with the provider’s words in the API, counted, and never retried', async () => {
    const environment = randomName('dev');
    standIn.plan('azure:post', { onlyIf: environment, status: 404, body: { message: 'TF401019: The Git repository with name or identifier gitops does not exist.' } });
    const merged = await merge(azure, environment);
    const { commit } = merged;
    const answer = await waitFor(async () => {
      const body = await api('/notifications');
      return body.items.some((item: any) => item.state === 'failed') ? body : undefined;
    }, 'the refused status in the API');
    const refused = answer.items.find((item: any) => item.state === 'failed');
    expect(refused).toMatchObject({ channel: 'azure-statuses', kind: 'status', lastError: 'HTTP 404: TF401019: The Git repository with name or identifier gitops does not exist.' });
    expect(refused.summary).toContain(`kalypso/${environment}`);
    expect(answer.channels.map((channel: any) => [channel.name, channel.type])).toEqual([
      ['github-statuses', 'github'],
      ['gitlab-statuses', 'gitlab'],
      ['azure-statuses', 'azuredevops'],
      ['decisions', 'webhook'],
    ]);
    expect(JSON.stringify(answer)).not.toMatch(/token|secret|\/hooks\//i);
    await finish(merged, ['success', 'success']);
    await waitFor(() => standIn.statuses.some((status) => status.provider === 'azure' && status.commit === commit && status.state === 'succeeded'), 'a later status');
    const metrics = await (await fetch(`http://127.0.0.1:${hub.ports.http}/metrics`)).text();
    expect(metrics).toMatch(/kalypso_notifications_failed_total\{channel="azure-statuses",kind="status"\} 1/);
  });
});
