// The Kalypso promotion flow end to end, through the hub's real inputs and outputs: Flux on the
// hub's cluster applies DeploymentDescriptors and moves its Kustomization's lastAppliedRevision on
// every merge (the Kubernetes stand-in, the real client library), clusters report over OTLP (the
// official SDK exporters) and as Reconciler resources, and a pipeline loop runs Check Promote with
// the CLI (`kalypso-hub rollout --environment … --wait`), promoting only on exit 0. Three environments
// in a configured order, three workloads, unrelated merges between promotions, a cluster that skips
// a commit, a failing cluster, a silent one. Every commit is a random 40-hex id; every answer along
// the way is checked: desired state, order, differences, drift, both gates (full and short commits),
// delivery, the commit statuses a GitHub stand-in was sent for every step, and the Rollout view in
// Chromium.
import { spawn } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { shortCommit } from '../../src/ui/app/format.ts';
import { launchBrowser } from '../support/browser.ts';
import type { FakeKubeApiServer } from '../support/kube-apiserver.ts';
import { type KubeHub, startKubeHub } from '../support/kube-hub.ts';
import { GitHostStandIn, notificationsFile, PUBLIC_URL } from '../support/notify-flow.ts';
import { Cluster, type ClusterChannel, DescriptorFlux, type FlowWorkload, GitOpsRepository, SimulatedClock } from '../support/promotion-flow.ts';
import { randomName } from '../support/random-ids.ts';
import type { TestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

const CLI = path.resolve(import.meta.dirname, '../../src/cli/main.ts');
// Promotion order; the names sort otherwise (dev, prod, qa), and the hub sees prod first.
const [DEV, QA, PROD] = [randomName('dev'), randomName('qa'), randomName('prod')] as const;
const ORDER = [DEV, QA, PROD];
const WORKSPACE = randomName('ws');
const [CART, WEB, PAY]: FlowWorkload[] = ['cart', 'web', 'pay'].map((name) => ({ workspace: WORKSPACE, application: 'shop', name: randomName(name) }));
const WORKLOADS = [CART!, WEB!, PAY!];

let kube: KubeHub | undefined;
let api: FakeKubeApiServer;
let testDb: TestDatabase;
let hub: RunningHub;
let clock: SimulatedClock;
let repo: GitOpsRepository;
let flux: DescriptorFlux;
let github: GitHostStandIn;
const clusters: Cluster[] = [];

const inEnvironment = (environment: string) => clusters.filter((cluster) => cluster.environment === environment);
const cluster = (name: string) => clusters.find((candidate) => candidate.name === name)!;

async function get(pathAndQuery: string): Promise<any> {
  const response = await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1${pathAndQuery}`);
  const body = await response.json();
  if (!response.ok) throw new Error(`${pathAndQuery}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

function rollout(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'rollout', '--url', `http://127.0.0.1:${hub.ports.http}`, ...args]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The hub has taken the branch's head as the desired commit of every target of the environment. */
async function desiredHead(environment: string): Promise<void> {
  const head = repo.head(environment);
  await waitFor(async () => {
    const { items } = await get(`/environments/${environment}/state`);
    return items.length === WORKLOADS.length && items.every((item: any) => item.desired?.commit === head);
  }, `desired commit ${head} in ${environment}`);
}

/** Every cluster that is not silent reports its last state, now; the hub confirms qa-a's resources. */
async function heartbeat(): Promise<void> {
  for (const each of clusters) await each.heartbeat();
  await waitFor(async () => {
    const host = await get(`/hosts/${cluster(`${QA}-a`).name}/state`);
    return host.reconcilers.every((r: any) => new Date(r.lastSeenAt).getTime() >= clock.now().getTime() - 1_000);
  }, 'the Reconciler resources’ heartbeat');
}

/** A merge to an environment's branch, applied by Flux on the hub and by every live cluster of it. */
async function merge(environment: string, versions: readonly [FlowWorkload, string][] = [], appliedBy = inEnvironment(environment)): Promise<string> {
  const commit = repo.merge(environment, versions);
  clock.advance(20_000);
  flux.reconcile(environment);
  await desiredHead(environment);
  clock.advance(10_000);
  for (const each of appliedBy) await each.apply(commit);
  return commit;
}

/** Check Promote for the environment's head: the CLI waits while the clusters apply it. */
async function checkPromote(environment: string, versions: readonly [FlowWorkload, string][], options: { wait: string; commitAs?: 'short' }) {
  const commit = repo.merge(environment, versions);
  clock.advance(20_000);
  flux.reconcile(environment);
  await desiredHead(environment);
  const asked = rollout(['--environment', environment, '--commit', options.commitAs === 'short' ? shortCommit(commit) : commit, '--wait', options.wait]);
  clock.advance(10_000);
  for (const each of inEnvironment(environment)) await each.apply(commit);
  return { commit, result: await asked };
}

/** The pipeline: promote a version environment by environment, on to the next only on exit 0. */
async function promote(workload: FlowWorkload, version: string): Promise<{ reached: string[]; stoppedAt?: { environment: string; code: number | null; stdout: string } }> {
  const reached: string[] = [];
  for (const environment of ORDER) {
    const { result } = await checkPromote(environment, [[workload, version]], { wait: '20s', commitAs: reached.length % 2 === 0 ? undefined : 'short' });
    if (result.code !== 0) return { reached, stoppedAt: { environment, code: result.code, stdout: result.stdout } };
    reached.push(environment);
    // Other teams' merges land between promotions: the branch moves, these versions do not.
    await merge(environment);
  }
  return { reached };
}

beforeAll(async () => {
  // Some 25 minutes pass in the scenario (a silent cluster must outlast stale-after), all of them
  // before the real now: the hub caps a report's time at its receipt.
  clock = new SimulatedClock(new Date(Date.now() - 45 * 60_000));
  repo = new GitOpsRepository();
  github = new GitHostStandIn();
  await github.start();
  const notifications = await notificationsFile(github, { repos: { github: [`${repo.url.slice(0, repo.url.lastIndexOf('/'))}/*`, 'https://github.com/contoso/*'] } });
  kube = await startKubeHub({
    // Resynced each second: Reconciler resources are confirmed then (re-applying one unchanged is a
    // no-op for an API server, so qa-a's agent cannot refresh them).
    flags: ['--kube-resync', '1s', '--environment-order', ORDER.join(','), '--notifications', notifications, '--public-url', PUBLIC_URL],
    clock: () => clock.now(),
  });
  ({ api, testDb, hub } = kube);
  flux = new DescriptorFlux(api, clock, repo, WORKLOADS);
  const context = { api, clock, repo, workloads: WORKLOADS, ports: hub.ports };
  const fleet: [string, string, ClusterChannel][] = [
    [`${DEV}-a`, DEV, 'grpc'],
    [`${DEV}-b`, DEV, 'http-json'],
    [`${QA}-a`, QA, 'reconciler-resource'],
    [`${QA}-b`, QA, 'http-protobuf'],
    [`${PROD}-a`, PROD, 'grpc'],
    [`${PROD}-b`, PROD, 'http-json'],
    [`${PROD}-c`, PROD, 'http-protobuf'],
  ];
  for (const [name, environment, channel] of fleet) clusters.push(new Cluster(name, environment, channel, context));
  // Every environment starts on 1.0; the hub meets prod first.
  for (const environment of [PROD, QA, DEV]) await merge(environment, WORKLOADS.map((workload) => [workload, '1.0'] as [FlowWorkload, string]));
  await heartbeat();
}, 120_000);

afterAll(async () => {
  await kube?.stop();
  await github?.stop();
});

describe('the promotion flow', () => {
  it('starts with every target on its branch head, in the configured order', async () => {
    expect((await get('/environments')).items.map((environment: any) => environment.name)).toEqual(ORDER);
    for (const environment of ORDER) {
      const { items } = await get(`/environments/${environment}/state`);
      for (const item of items) {
        expect(item.desired).toMatchObject({ version: '1.0', commit: repo.head(environment) });
        expect(item.deployed).toEqual([expect.objectContaining({ version: '1.0', commit: repo.head(environment), onDesired: true })]);
      }
    }
  });

  it('promotes a version through every environment, each Check Promote passing on full or short commits', async () => {
    const outcome = await promote(CART!, '2.0');
    expect(outcome).toEqual({ reached: ORDER });
    for (const environment of ORDER) {
      const { items } = await get(`/environments/${environment}/state`);
      const cart = items.find((item: any) => item.workload === CART!.name);
      // The desired commit followed the branch through the unrelated merge; the version did not move.
      expect(cart.desired).toMatchObject({ version: '2.0', commit: repo.head(environment) });
      expect(cart.deployed).toEqual([expect.objectContaining({ version: '2.0', onDesired: true })]);
      expect((await get(`/drift?environment=${environment}`)).items).toEqual([]);
    }
  }, 120_000);

  it('counts a cluster that skipped a commit as past it, by what another cluster witnessed', async () => {
    const skipped = await merge(DEV, [], [cluster(`${DEV}-a`)]);
    const next = await merge(DEV, [], [cluster(`${DEV}-a`), cluster(`${DEV}-b`)]);
    const gate = await get(`/deployment-state?environment=${DEV}&commit=${skipped}`);
    expect(gate).toMatchObject({ commit: skipped, total: 6, succeeded: 6, settled: true });
    expect(gate.subscribers.filter((s: any) => s.host === `${DEV}-b`).map((s: any) => s.supersededBy)).toEqual([next, next, next]);
    // The endpoint gate, asked with the 7-digit prefix a person would type, agrees.
    const endpoint = encodeURIComponent(repo.endpoint(DEV, WEB!));
    expect(await get(`/deployment-state?manifestsEndpoint=${endpoint}&commit=${skipped.slice(0, 7)}`)).toMatchObject({ commit: skipped, total: 2, succeeded: 2 });
  });

  it('stops at the environment where a cluster fails, with the same verdict in the gate and in Delivery', async () => {
    cluster(`${PROD}-c`).failing.set(WEB!.name, '2.0');
    const outcome = await promote(WEB!, '2.0');
    expect(outcome.reached).toEqual([DEV, QA]);
    expect(outcome.stoppedAt).toMatchObject({ environment: PROD, code: 1 });
    expect(outcome.stoppedAt!.stdout).toMatch(new RegExp(`^${PROD}-c\\s+flux-system/${WEB!.name}\\s+failure`, 'm'));
    const gate = await get(`/deployment-state?environment=${PROD}&commit=${repo.head(PROD)}`);
    expect(gate).toMatchObject({ total: 9, succeeded: 8, failed: 1, settled: true });
    const delivery = await get(`/metrics/delivery?environment=${PROD}&workload=${WEB!.name}&since=${new Date(0).toISOString()}`);
    expect(delivery.recentRollouts[0]).toMatchObject({ version: '2.0', status: 'failed', current: true, subscribers: 3, succeeded: 2, failed: 1 });
    const drift = (await get(`/drift?environment=${PROD}`)).items;
    expect(drift.map((entry: any) => [entry.host, entry.workload, entry.reasons])).toEqual([[`${PROD}-c`, WEB!.name, ['failing']]]);
  }, 120_000);

  it('never promotes past a silent cluster: stale is never success', async () => {
    cluster(`${QA}-b`).silent = true;
    const dev = await checkPromote(DEV, [[PAY!, '2.0']], { wait: '20s' });
    expect(dev.result.code).toBe(0);
    const commit = repo.merge(QA, [[PAY!, '2.0']]);
    clock.advance(20_000);
    flux.reconcile(QA);
    await desiredHead(QA);
    // The CLI waits; meanwhile the other clusters apply and keep reporting, and qa-b stays silent
    // past the stale-after (15 minutes).
    const asked = rollout(['--environment', QA, '--commit', shortCommit(commit), '--wait', '4s']);
    for (const each of inEnvironment(QA)) await each.apply(commit);
    clock.advance(16 * 60_000);
    await heartbeat();
    const result = await asked;
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(new RegExp(`^${QA}-b\\s+flux-system/${PAY!.name}\\s+stale`, 'm'));
    expect(result.stdout).toContain(`commit ${commit} in environment ${QA}: 3/6 succeeded, 0 failed, 0 in progress, 3 stale: not rolled out yet (timed out)`);
    expect((await get(`/environments/${PROD}/state`)).items.find((item: any) => item.workload === PAY!.name).desired.version).toBe('1.0');
    // qa-b is stale everywhere, and off the desired version only where the merge changed it.
    const drift = (await get(`/drift?environment=${QA}`)).items;
    const reasons = Object.fromEntries(drift.map((entry: any) => [`${entry.host} ${entry.workload}`, entry.reasons]));
    expect(reasons).toEqual({
      [`${QA}-b ${CART!.name}`]: ['stale'],
      [`${QA}-b ${WEB!.name}`]: ['stale'],
      [`${QA}-b ${PAY!.name}`]: ['not_on_desired_commit', 'stale'],
    });
  }, 120_000);

  it('compares environments in promotion order, whichever order they are asked in', async () => {
    const compare = await get(`/compare?environments=${PROD},${DEV},${QA}`);
    expect(compare.environments).toEqual([PROD, DEV, QA]);
    const row = (workload: FlowWorkload) => compare.items.find((item: any) => item.workload === workload.name);
    const desired = (workload: FlowWorkload) => ORDER.map((environment) => row(workload).environments[environment].desired.version);
    expect(desired(CART!)).toEqual(['2.0', '2.0', '2.0']);
    expect(desired(WEB!)).toEqual(['2.0', '2.0', '2.0']);
    expect(desired(PAY!)).toEqual(['2.0', '2.0', '1.0']);
    expect([row(CART!).desiredDiffers, row(WEB!).desiredDiffers, row(PAY!).desiredDiffers]).toEqual([false, false, true]);

    const client = new pg.Client({ connectionString: testDb.url });
    await client.connect();
    try {
      await client.query('SET ROLE kalypso_reader');
      const { rows } = await client.query(
        `SELECT environment, previous_environment, differs_from_previous FROM kalypso_environment_discrepancy
          WHERE workload = $1 ORDER BY environment_order`,
        [PAY!.name],
      );
      expect(rows).toEqual([
        { environment: DEV, previous_environment: null, differs_from_previous: false },
        { environment: QA, previous_environment: DEV, differs_from_previous: false },
        { environment: PROD, previous_environment: QA, differs_from_previous: true },
      ]);
    } finally {
      await client.end();
    }
  });

  it('counts one rollout per new version, however often the branches moved', async () => {
    const since = new Date(0).toISOString();
    const delivery = await get(`/metrics/delivery?since=${since}&limit=100&fixWindow=0`);
    const rollouts = delivery.recentRollouts.map((r: any) => `${r.environment} ${r.workload} ${r.version}`).sort();
    const expected = [
      ...ORDER.flatMap((environment) => WORKLOADS.map((workload) => `${environment} ${workload.name} 1.0`)),
      ...ORDER.map((environment) => `${environment} ${CART!.name} 2.0`),
      ...ORDER.map((environment) => `${environment} ${WEB!.name} 2.0`),
      ...[DEV, QA].map((environment) => `${environment} ${PAY!.name} 2.0`),
    ].sort();
    expect(rollouts).toEqual(expected);
    const merges = ORDER.reduce((sum, environment) => sum + repo.history.get(environment)!.length, 0);
    expect(merges).toBeGreaterThan(expected.length / WORKLOADS.length);
    // The one change failure is web 2.0 in prod (a failure report), not a merge that kept versions.
    expect(delivery.changeFailureRate).toMatchObject({ failures: 1, withFailureReports: 1, supersededWithinFixWindow: 0 });
  });
});

/** Every change so far judged and its statuses delivered: the rollouts folded in (as a report does), nothing due, nothing waiting. */
async function notificationsDelivered(): Promise<void> {
  await get(`/metrics/delivery?since=${new Date(0).toISOString()}`);
  await waitFor(async () => {
    const [pending] = await testDb.query<{ dirty: number; due: number; undone: number }>(
      `SELECT (SELECT count(*) FROM notify_dirty_endpoint)::int AS dirty,
              (SELECT count(*) FROM notify_subject WHERE retired_at IS NULL AND due_at <= $1)::int AS due,
              (SELECT count(*) FROM notify_outbox WHERE sent_at IS NULL AND failed_at IS NULL AND superseded_by IS NULL)::int AS undone`,
      [clock.now()],
    );
    return pending!.dirty + pending!.due + pending!.undone === 0;
  }, 'the notifications delivered', 30_000);
}

describe('commit statuses', () => {
  /** What GitHub shows for each merge of an environment's branch, in the order of its merges. */
  const branchStatuses = (environment: string) =>
    repo.history.get(environment)!.map((commit) => github.shown('github', commit, `kalypso/${environment}`).map((status) => `${status.state}: ${status.description}`));

  it('told GitHub of every step: each merge pending, then success — or failure where a cluster failed, pending where one fell silent', async () => {
    // Half a minute on, a rollout with a silent subscriber is judged again (qa-a spoke again, with
    // the same state: no transition marked its rollout).
    clock.advance(31_000);
    await notificationsDelivered();
    for (const environment of ORDER) {
      const statuses = branchStatuses(environment);
      for (const [index, shown] of statuses.entries()) {
        // Never the same state and description twice in a row.
        expect(shown.filter((line, at) => at > 0 && line === shown[at - 1]), `${environment} #${index}`).toEqual([]);
        expect(shown.length, `${environment} merge #${index} has a status`).toBeGreaterThan(0);
      }
    }
    const total = (environment: string) => inEnvironment(environment).length * WORKLOADS.length;
    // dev promoted cart, web and pay to 2.0, and its last merge runs 2.0 of each everywhere.
    expect(branchStatuses(DEV).at(-1)!.at(-1)).toBe(`success: ${total(DEV)}/${total(DEV)} reconcilers on 2.0`);
    // prod stopped where prod-c failed web 2.0; its later merges never came.
    expect(branchStatuses(PROD).at(-1)!.at(-1)).toBe(`failure: ${total(PROD) - 1}/${total(PROD)} applied · 1 failed (${PROD}-c)`);
    // qa's last merge (pay 2.0) waits on qa-b, silent past stale-after.
    expect(branchStatuses(QA).at(-1)!.at(-1)).toBe(`pending: ${total(QA) / 2}/${total(QA)} applied · ${total(QA) / 2} stale`);
    // Every status links to the Rollout view of its environment and commit.
    for (const status of github.statuses.filter((posted) => posted.repo.endsWith('/platform-gitops'))) {
      expect(status.targetUrl).toBe(`${PUBLIC_URL}/rollout?environment=${status.context.slice('kalypso/'.length)}&commit=${status.commit}`);
    }
  });

  it('told the source repositories which environments run each build', () => {
    const sources = github.statuses.filter((posted) => posted.repo.startsWith('contoso/'));
    const contexts = new Set(sources.map((status) => status.context));
    expect([...contexts].sort()).toEqual(ORDER.map((environment) => `kalypso/${environment}`).sort());
    // cart 2.0's build reached prod: its last status there is a success, on 2.0.
    const cartInProd = sources.filter((status) => status.repo === `contoso/${CART!.name}` && status.context === `kalypso/${PROD}`);
    expect(cartInProd.at(-1)).toMatchObject({ state: 'success', description: expect.stringMatching(/^3\/3 reconcilers on 2\.0$/) });
  });
});

describe('the web UI', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser.close();
  });

  it('takes an environment and a commit as the UI shows it, and resolves it to the full commit', async () => {
    const page = await browser.newPage();
    const head = repo.head(DEV);
    await page.goto(`http://127.0.0.1:${hub.ports.http}/rollout?environment=${DEV}&commit=${shortCommit(head)}`);
    await page.waitForSelector('.verdict');
    expect(await page.locator('.verdict').textContent()).toMatch(/^Rolled out — 6\/6 succeeded/);
    // The commit resolved: shown in the one short form, the full id on hover.
    expect(await page.locator('.scope .commit-id').textContent()).toBe(shortCommit(head));
    expect(await page.locator('.scope .commit-id').getAttribute('title')).toBe(head);
    expect(await page.locator('.scope').textContent()).toContain(`in environment ${DEV}`);
    expect(await page.locator('table.targets tbody tr').count()).toBe(WORKLOADS.length);
    await page.close();
  });

  it('shows the matrix in promotion order, a commit that carries the desired version as on it', async () => {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${hub.ports.http}/?workspace=${WORKSPACE}`);
    await page.waitForSelector('table.matrix tbody tr[data-workload]');
    expect(await page.$$eval('table.matrix thead th', (cells) => cells.slice(1).map((cell) => cell.textContent))).toEqual(ORDER);
    const deployed = (workload: FlowWorkload, environment: string) =>
      page.$$eval(`tr[data-workload="${workload.name}"] td[data-environment="${environment}"] .deployed li`, (items) =>
        items.map((item) => [item.textContent, item.className]).sort(),
      );
    // dev's branch moved on after cart 2.0 (merges for nobody, a skipped commit): still cart 2.0, on it.
    expect(await deployed(CART!, DEV)).toEqual([['2.0 ×2', 'on-desired']]);
    // qa: pay 2.0 is desired; qa-b, silent, still runs 1.0.
    expect(await deployed(PAY!, QA)).toEqual([
      ['1.0 ×1', 'off-desired'],
      ['2.0 ×1', 'on-desired'],
    ]);
    await page.close();
  });
});
