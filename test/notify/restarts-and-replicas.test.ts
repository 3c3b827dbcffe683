// The outbox under the faults CONTRACT section 7 names: a hub killed mid-rollout and started again,
// a hub gone in the middle of a send, two hubs on one database — and still every state goes out,
// once. And the tokens: never in the hub's output.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { freeHubPorts, type HubProcess, spawnHub } from '../support/hub-process.ts';
import { clusterStates, FAST_NOTIFY, GitHostStandIn, mergeDescriptors, notificationsFile, orgRepos, PUBLIC_URL, randomOrg, send, startNotifyingHub } from '../support/notify-flow.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

const org = randomOrg('github');
let standIn: GitHostStandIn;
let file: string;
const databases: TestDatabase[] = [];
const hubs: RunningHub[] = [];
const processes: HubProcess[] = [];

beforeAll(async () => {
  standIn = new GitHostStandIn();
  await standIn.start();
  file = await notificationsFile(standIn, { repos: { github: orgRepos(org, 'github') }, webhook: true });
});

afterAll(async () => {
  for (const child of processes) child.process.kill('SIGKILL');
  for (const hub of hubs) await hub.stop();
  await standIn?.stop();
  for (const database of databases) await database.drop();
});

async function database(): Promise<TestDatabase> {
  const created = await createTestDatabase();
  databases.push(created);
  return created;
}

/** What GitHub shows for the commit and context, in order. */
const shown = (commit: string, environment: string) => standIn.shown('github', commit, `kalypso/${environment}`).map((status) => `${status.state}: ${status.description}`);

/** No state and description twice in a row, and each state change once. */
function expectOnceEach(lines: readonly string[]): void {
  expect(lines.filter((line, index) => index > 0 && line === lines[index - 1])).toEqual([]);
  expect(new Set(lines).size).toBe(lines.length);
}

describe('a hub killed mid-rollout', () => {
  it('is started again and sends the final state once, without repeating what it had sent; its output holds no token or secret', async () => {
    const testDb = await database();
    const ports = await freeHubPorts();
    const flags = ['--notifications', file, '--public-url', PUBLIC_URL, '--log-level', 'trace'];
    const first = spawnHub(testDb.url, ports, flags);
    processes.push(first);
    const target = { ports: { otlpGrpc: ports.otlpGrpc, otlpHttp: ports.otlpHttp } } as RunningHub;
    await waitFor(() => first.output().includes('notifications on'), 'the first hub', 30_000);
    const environment = randomName('prod');
    const commit = randomCommit();
    const workloads = [randomName('api')];
    const clusters = [randomName('aks'), randomName('aks')];
    await send(target, mergeDescriptors(org, environment, { commit, version: '3.1.0', buildCommit: randomCommit(), workloads }));
    await send(target, clusters.flatMap((cluster) => clusterStates(org, environment, cluster, commit, 'in_progress', workloads)));
    await send(target, clusterStates(org, environment, clusters[0]!, commit, 'success', workloads));
    await waitFor(() => shown(commit, environment).at(-1) === 'pending: 1/2 applied · 1 in progress', 'progress on GitHub', 20_000);
    // Killed between sends, not in one: a post GitHub shows may not be marked sent yet, and what a
    // dead hub claimed waits out its 60 s lease (the test of a hub gone mid-send, below).
    const onItsWay = async (): Promise<number> =>
      Number((await testDb.query<{ n: string }>('SELECT count(*) AS n FROM notify_outbox WHERE claimed_until IS NOT NULL AND sent_at IS NULL AND failed_at IS NULL'))[0]!.n);
    await waitFor(async () => (await onItsWay()) === 0, 'the progress marked sent', 20_000);

    first.process.kill('SIGKILL');
    await first.exited;
    const second = spawnHub(testDb.url, ports, flags);
    processes.push(second);
    await waitFor(() => second.output().includes('notifications on'), 'the hub again', 30_000);
    await send(target, clusterStates(org, environment, clusters[1]!, commit, 'success', workloads));
    await waitFor(() => shown(commit, environment).at(-1) === 'success: 2/2 reconcilers on 3.1.0', 'success on GitHub', 20_000);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expectOnceEach(shown(commit, environment));
    expect(shown(commit, environment).filter((line) => line.startsWith('success'))).toHaveLength(1);

    const output = first.output() + second.output();
    for (const token of standIn.tokens.values()) expect(output).not.toContain(token);
    for (const secret of standIn.secrets.values()) expect(output).not.toContain(secret);
    expect(output).toContain('notification delivered');
  });
});

describe('a hub gone in the middle of a send', () => {
  it('leaves the message claimed until its lease ends; another hub then finds it shown already and does not post it again', async () => {
    const testDb = await database();
    const lease = { ...FAST_NOTIFY, claimLeaseMs: 1_500 };
    const first = await startNotifyingHub(testDb.url, file, { notifyTuning: lease });
    const environment = randomName('qa');
    const commit = randomCommit();
    const workloads = [randomName('api')];
    const cluster = randomName('aks');
    // GitHub records the status, but its answer comes after the hub is gone.
    standIn.delayNext('github:post', 3_000);
    await send(first, mergeDescriptors(org, environment, { commit, version: '1.0.0', buildCommit: randomCommit(), workloads }));
    await send(first, clusterStates(org, environment, cluster, commit, 'success', workloads));
    await waitFor(() => shown(commit, environment).length > 0, 'the status recorded');
    await first.stop();

    const second = await startNotifyingHub(testDb.url, file, { notifyTuning: lease });
    hubs.push(second);
    const rows = await waitFor(async () => {
      const outbox = await testDb.query<{ key: string; sent_at: Date | null }>(`SELECT key, sent_at FROM notify_outbox WHERE key LIKE '%' || $1 || '%'`, [commit]);
      return outbox.length > 0 && outbox.every((row) => row.sent_at !== null) ? outbox : undefined;
    }, 'the outbox delivered', 15_000);
    expect(rows.length).toBeGreaterThan(0);
    expect(shown(commit, environment)).toEqual(['success: 1/1 reconcilers on 1.0.0']);
  });
});

describe('a notifier whose first look comes after a merge has landed', () => {
  it('still posts the merge it had not seen: it arrived after the notifier started, so it is news, not history', async () => {
    const testDb = await database();
    // Another hub's notifier holds the lock, so this hub's first look waits (as on a busy machine).
    const holder = new pg.Client({ connectionString: testDb.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(hashtext('kalypso_notify'))`);
      const hub = await startNotifyingHub(testDb.url, file);
      hubs.push(hub);
      const environment = randomName('stage');
      const commit = randomCommit();
      const workloads = [randomName('api')];
      await send(hub, mergeDescriptors(org, environment, { commit, version: '2.4.0', buildCommit: randomCommit(), workloads }));
      await send(hub, clusterStates(org, environment, randomName('aks'), commit, 'success', workloads));
      const gate = `http://127.0.0.1:${hub.ports.http}/api/v1/deployment-state?environment=${environment}&commit=${commit}`;
      await waitFor(async () => ((await (await fetch(gate)).json()) as { succeeded: number }).succeeded === 1, 'the merge landed');
      expect(shown(commit, environment)).toEqual([]);
      await holder.query('COMMIT');
      await waitFor(() => shown(commit, environment).length > 0, 'the status posted');
      expect(shown(commit, environment)).toEqual(['success: 1/1 reconcilers on 2.4.0']);
    } finally {
      await holder.end();
    }
  });
});

describe('two hubs on one database', () => {
  it('send each status and each event once', async () => {
    const testDb = await database();
    const [a, b] = [await startNotifyingHub(testDb.url, file), await startNotifyingHub(testDb.url, file)];
    hubs.push(a, b);
    const environment = randomName('dev');
    const commit = randomCommit();
    const workloads = [randomName('cart'), randomName('web')];
    const clusters = [randomName('aks'), randomName('aks'), randomName('aks')];
    await send(a, mergeDescriptors(org, environment, { commit, version: '5.0.0', buildCommit: randomCommit(), workloads }));
    // Reports to either hub, as a load balancer spreads them.
    for (const [index, cluster] of clusters.entries()) await send(index % 2 === 0 ? a : b, clusterStates(org, environment, cluster, commit, 'in_progress', workloads));
    for (const [index, cluster] of clusters.entries()) {
      await send(index % 2 === 0 ? b : a, clusterStates(org, environment, cluster, commit, 'success', workloads));
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    await waitFor(() => shown(commit, environment).at(-1) === 'success: 6/6 reconcilers on 5.0.0', 'success on GitHub', 20_000);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expectOnceEach(shown(commit, environment));
    const events = standIn.events.filter((received) => received.event.subject === `${environment}/${commit}`);
    expect(events.map((received) => received.answered).every((status) => status === 202)).toBe(true);
    const ids = events.map((received) => received.event.id as string);
    expect(new Set(ids).size).toBe(ids.length);
    expect(events.at(-1)!.event.type).toBe('io.kalypso.rollout.succeeded');
  });
});
