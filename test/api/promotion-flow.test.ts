// The promotion flow's rules, through the real paths (OTLP exporter → hub → API), with random commit
// ids: every merge moves an environment branch and most targets keep their version. Desired state
// follows time, not hex text; a merge that keeps a target's version carries its rollout; the gates
// judge "C or a later commit" by witnessed order only; short commits resolve; Delivery and the gate
// give one verdict. (test/e2e/promotion-flow.test.ts replays the whole flow with Kubernetes and the CLI.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { buildLogRecords, createExporter, ExportResultCode, exportLogs, type LogSpec } from '../support/otlp-client.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';
import { environmentGateReport } from '../../src/store/reports/environment-gate-report.ts';
import { apiGet } from '../support/api-get.ts';

let testDb: TestDatabase;
let hub: RunningHub;
let exporter: ReturnType<typeof createExporter>;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url);
  exporter = createExporter('grpc', hub.ports);
});

afterAll(async () => {
  await exporter.shutdown();
  await hub.stop();
  await testDb.drop();
});

async function send(specs: LogSpec[]): Promise<void> {
  const result = await exportLogs(exporter, await buildLogRecords(specs));
  expect(result.code, String(result.error)).toBe(ExportResultCode.SUCCESS);
}

const get = (path: string) => apiGet(hub, path);

/**
 * One GitOps branch of an environment, its targets one path each, and a clock in steps of ten
 * seconds from ten minutes ago (every host stays fresh: stale-after is 15 minutes).
 */
class Branch {
  readonly repo = `https://github.com/${randomName('org')}/app-gitops`;
  readonly environment: string;
  readonly workspace = randomName('ws');

  constructor(environment = randomName('env')) {
    this.environment = environment;
  }

  readonly #start = Date.now() - 10 * 60_000;

  at(step: number): Date {
    return new Date(this.#start + step * 10_000);
  }

  endpoint(target: string): string {
    return `${this.repo}/${this.environment}/${target}`;
  }

  descriptor(target: string, version: string, commit: string, step: number): LogSpec {
    return {
      resource: { 'service.name': 'cd-pipeline' },
      eventName: 'kalypso.deployment.descriptor',
      attributes: { 'vcs.ref.head.revision': commit },
      body: {
        workload: { name: target, application: { name: 'app', workspace: { name: this.workspace } } },
        deploymentTarget: { name: 'main', environment: this.environment, manifests: { repo: this.repo, branch: this.environment, path: target } },
        workloadVersion: { version, build: `b-${version}`, buildTime: this.at(step - 5).toISOString() },
      },
      time: this.at(step),
    };
  }

  state(host: string, target: string, commit: string, status: string, step: number): LogSpec {
    return {
      resource: { 'k8s.cluster.name': host },
      eventName: 'kalypso.deployment.state',
      attributes: {
        'kalypso.reconciler.name': `flux-system/${target}`,
        'kalypso.reconciler.type': 'flux',
        'kalypso.manifests.endpoint': this.endpoint(target),
        'vcs.ref.head.revision': `${this.environment}@sha1:${commit}`,
        'kalypso.deployment.status': status,
      },
      body: status === 'failure' ? 'Health check failed' : `Applied revision: ${commit}`,
      time: this.at(step),
    };
  }

  /** Hosts apply `commit` (in progress, then success a step later). */
  applied(hosts: readonly [host: string, target: string][], commit: string, step: number): LogSpec[] {
    return hosts.flatMap(([host, target]) => [this.state(host, target, commit, 'in_progress', step), this.state(host, target, commit, 'success', step + 1)]);
  }
}

const gate = (query: Record<string, string>) => get(`/deployment-state?${new URLSearchParams(query).toString()}`);

describe('desired state', () => {
  it('follows the newest assignment by time, whatever the commits’ hex order, and never moves back', async () => {
    for (let round = 0; round < 4; round += 1) {
      const branch = new Branch();
      const commits = [randomCommit(), randomCommit(), randomCommit()];
      // One version through three merges (the Kalypso flow: the branch moves, the descriptor does not).
      await send(commits.map((commit, index) => branch.descriptor('api', '1.0.0', commit, index)));
      const state = async () => (await get(`/environments/${branch.environment}/state`)).body.items[0].desired.commit;
      expect(await state()).toBe(commits[2]);
      await send([branch.descriptor('api', '1.0.0', commits[0]!, 0)]);
      expect(await state()).toBe(commits[2]);
    }
  });
});

describe('a branch its clusters name late', () => {
  it('runs the version a merge carries, though only clusters that named their branch later saw it come', async () => {
    // web is assigned 7.0 at c1. The edge clusters' agent names only the joined endpoint at first,
    // then repo, branch and path apart (vcs.* attributes): only then is their endpoint known to be
    // on this branch, and what they witnessed before — c2 came after c1 — holds for web's target too.
    const branch = new Branch();
    const [c1, c2] = [randomCommit(), randomCommit()];
    await send([branch.descriptor('web', '7.0', c1, 0)]);
    await send(branch.applied([['h-web-1', 'web']], c1, 1));
    await send([branch.state('h-edge-1', 'edge', c1, 'success', 2), branch.state('h-edge-1', 'edge', c2, 'success', 10)]);
    const named = branch.state('h-edge-1', 'edge', c2, 'success', 11);
    delete named.attributes!['kalypso.manifests.endpoint'];
    Object.assign(named.attributes!, { 'vcs.repository.url.full': branch.repo, 'vcs.ref.head.name': branch.environment, 'kalypso.manifests.path': 'edge' });
    await send([named]);
    // A web cluster that joins on c2: nothing on web's own endpoint witnessed c2 after c1.
    await send(branch.applied([['h-web-2', 'web']], c2, 12));
    const web = (await get(`/environments/${branch.environment}/state`)).body.items.find((item: any) => item.workload === 'web');
    expect(web.deployed.find((d: any) => d.commit === c2)).toMatchObject({ version: '7.0', onDesired: true });
    expect((await get(`/drift?environment=${branch.environment}`)).body.items).toEqual([]);
  });
});

describe('a branch that moves for other targets’ sake', () => {
  const branch = new Branch();
  const [c1, c2, c3, c4] = [randomCommit(), randomCommit(), randomCommit(), randomCommit()];
  const fleet: [string, string][] = [
    ['h-api-1', 'api'],
    ['h-web-1', 'web'],
  ];

  beforeAll(async () => {
    // c1: both targets assigned. c2: api moves to 2.0, web does not change. c3: an unrelated merge.
    await send([branch.descriptor('api', '1.0', c1, 0), branch.descriptor('web', '7.0', c1, 0)]);
    await send(branch.applied(fleet, c1, 1));
    await send([branch.descriptor('api', '2.0', c2, 10)]);
    await send(branch.applied(fleet, c2, 11));
    await send(branch.applied(fleet, c3, 21));
    // A cluster that skipped c3 (it polled after c4 was merged), and a silent one left on c1.
    await send([...branch.applied([['h-api-2', 'api']], c2, 12), ...branch.applied([['h-api-2', 'api']], c4, 31), ...branch.applied([['h-api-1', 'api']], c4, 30)]);
  });

  it('runs the version it carries: no drift, deployed version named, on the desired rollout', async () => {
    const { body } = await get(`/environments/${branch.environment}/state`);
    const web = body.items.find((item: any) => item.workload === 'web');
    expect(web.desired).toMatchObject({ version: '7.0', commit: c1 });
    expect(web.deployed).toEqual([{ version: '7.0', commit: c3, onDesired: true, reconcilers: expect.objectContaining({ total: 1, succeeded: 1 }) }]);
    const api = body.items.find((item: any) => item.workload === 'api');
    expect(api.desired).toMatchObject({ version: '2.0', commit: c2 });
    expect(api.deployed.map((d: any) => [d.commit, d.version, d.onDesired])).toEqual([[c4, '2.0', true]]);
    expect((await get(`/drift?environment=${branch.environment}`)).body.items).toEqual([]);
    const host = (await get('/hosts/h-web-1/state')).body;
    expect(host.reconcilers[0].deploymentTargets[0]).toMatchObject({ deployedVersion: '7.0', desiredVersion: '7.0', desiredCommit: c1 });
  });

  it('passes the gate for a commit its subscribers moved past, by witnessed order only', async () => {
    // web's clusters applied c1, then c2 and c3: the gate for c1 counts them.
    const web = (await gate({ manifestsEndpoint: branch.endpoint('web'), commit: c1 })).body;
    expect(web).toMatchObject({ commit: c1, total: 1, succeeded: 1, settled: true });
    expect(web.subscribers[0]).toMatchObject({ appliedCommit: c3, supersededBy: c3 });
    // h-api-2 skipped c3; h-api-1 applied c3 then c4 on the same branch: c4 came after c3.
    const api = (await gate({ manifestsEndpoint: branch.endpoint('api'), commit: c3 })).body;
    expect(api).toMatchObject({ total: 2, succeeded: 2, settled: true });
    // The answer names what the commit means there: c3 was merged for nobody, and carries api 2.0.
    expect(api.targets).toEqual([
      expect.objectContaining({ environment: branch.environment, workload: 'api', manifestsEndpoint: branch.endpoint('api'), version: '2.0', desiredVersion: '2.0', desiredCommit: c2, total: 2, succeeded: 2 }),
    ]);
    expect(web.targets.map((t: any) => [t.environment, t.workload, t.version])).toEqual([[branch.environment, 'web', '7.0']]);
    // A commit nobody has seen: nothing came after it, nobody has applied it.
    const unseen = (await gate({ manifestsEndpoint: branch.endpoint('api'), commit: randomCommit() })).body;
    expect(unseen).toMatchObject({ total: 2, inProgress: 2, settled: false });
  });

  it('never takes a lagging cluster’s older commit for a newer one', async () => {
    const [older, newer] = [randomCommit(), randomCommit()];
    // A fast cluster is the first to see the newer commit; a slow one reports the older commit later.
    await send([...branch.applied([['h-fast', 'web']], c3, 40), ...branch.applied([['h-slow', 'web']], c3, 40)]);
    await send(branch.applied([['h-fast', 'web']], newer, 42));
    await send(branch.applied([['h-slow', 'web']], older, 44));
    const onNewer = (await gate({ manifestsEndpoint: branch.endpoint('web'), commit: newer })).body;
    expect(onNewer.subscribers.find((s: any) => s.host === 'h-slow')).toMatchObject({ status: 'in_progress', supersededBy: null });
    expect(onNewer.settled).toBe(false);
  });

  it('counts a rollout per version, not per merge', async () => {
    const since = branch.at(-5).toISOString();
    const { body } = await get(`/metrics/delivery?since=${since}&environment=${branch.environment}&limit=10`);
    expect(body.recentRollouts.map((r: any) => [r.workload, r.version, r.commit])).toEqual([
      ['api', '2.0', c2],
      ['api', '1.0', c1],
      ['web', '7.0', c1],
    ]);
    // The one change failure is api 1.0, replaced by 2.0 within the fix window; the merges that kept
    // versions are no rollouts, so nothing was "replaced" by them.
    expect(body.changeFailureRate).toMatchObject({ judged: 3, failures: 1, supersededWithinFixWindow: 1 });
    const strict = (await get(`/metrics/delivery?since=${since}&environment=${branch.environment}&fixWindow=0`)).body;
    expect(strict.changeFailureRate).toMatchObject({ judged: 3, failures: 0 });
  });
});

describe('commits as people type them', () => {
  const branch = new Branch();
  const commit = randomCommit();
  const solo = randomCommit();
  // Two commits that share their first eight digits with `commit`, and differ from it in the ninth.
  const ninth = (flip: number) => (Number.parseInt(commit[8]!, 16) ^ flip).toString(16);
  const twin = [1, 2].map((flip) => `${commit.slice(0, 8)}${ninth(flip)}${randomCommit().slice(9)}`);

  beforeAll(async () => {
    await send([branch.descriptor('api', '1.0', commit, 0), branch.descriptor('web', '1.0', twin[0]!, 1)]);
    await send([...branch.applied([['p-1', 'api']], commit, 2), ...branch.applied([['p-2', 'web']], twin[1]!, 3)]);
    await send([branch.descriptor('db', '1.0', solo, 4), ...branch.applied([['p-3', 'db']], solo, 5)]);
  });

  it('resolves a unique prefix of 7 or more digits, and answers with the full commit', async () => {
    const solved = (await gate({ manifestsEndpoint: branch.endpoint('db'), commit: solo.slice(0, 7) })).body;
    expect(solved).toMatchObject({ commit: solo, succeeded: 1, settled: true });
    // Eight digits are shared with the twins on the same branch: nine tell them apart.
    for (const typed of [commit.slice(0, 9), commit.slice(0, 10).toUpperCase(), `${branch.environment}@sha1:${commit}`]) {
      const { status, body } = await gate({ manifestsEndpoint: branch.endpoint('api'), commit: typed });
      expect(status, typed).toBe(200);
      expect(body).toMatchObject({ commit, succeeded: 1, settled: true });
    }
    expect((await gate({ environment: branch.environment, commit: twin[0]!.slice(0, 9) })).body.commit).toBe(twin[0]);
  });

  it('refuses an ambiguous, unknown or too short prefix, naming the candidates', async () => {
    const ambiguous = await gate({ environment: branch.environment, commit: commit.slice(0, 8) });
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.error.message).toMatch(/^commit: /);
    for (const candidate of [commit, ...twin]) expect(ambiguous.body.error.message).toContain(candidate);
    const unknown = await gate({ manifestsEndpoint: branch.endpoint('api'), commit: randomCommit().slice(0, 12) });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toMatch(/^commit: no commit the hub has seen on .* starts with /);
    const short = await gate({ manifestsEndpoint: branch.endpoint('api'), commit: commit.slice(0, 6) });
    expect(short.body.error.message).toMatch(/^commit: .* too short/);
  });
});

describe('the environment gate', () => {
  it('judges every target of the environment on the merged commit or a later one', async () => {
    const branch = new Branch();
    const [c1, c2, c3] = [randomCommit(), randomCommit(), randomCommit()];
    const fleet: [string, string][] = [
      ['e-api-1', 'api'],
      ['e-api-2', 'api'],
      ['e-web-1', 'web'],
    ];
    await send([branch.descriptor('api', '1.0', c1, 0), branch.descriptor('web', '3.0', c1, 0)]);
    await send(branch.applied(fleet, c1, 1));
    await send([branch.descriptor('web', '3.1', c2, 5)]);
    let answer = (await gate({ environment: branch.environment, commit: c2 })).body;
    expect(answer).toMatchObject({ environment: branch.environment, commit: c2, total: 3, inProgress: 3, settled: false });
    expect(answer.targets.map((t: any) => [t.workload, t.desiredVersion, t.version, t.total])).toEqual([
      ['api', '1.0', '1.0', 2],
      ['web', '3.1', '3.1', 1],
    ]);
    // e-api-2 goes straight to c3, a later merge; e-api-1 applied c2 then c3 (the witness).
    await send([...branch.applied([['e-api-1', 'api'], ['e-web-1', 'web']], c2, 6), ...branch.applied([['e-api-1', 'api']], c3, 8), ...branch.applied([['e-api-2', 'api']], c3, 9)]);
    answer = (await gate({ environment: branch.environment, commit: c2.slice(0, 7) })).body;
    expect(answer).toMatchObject({ commit: c2, total: 3, succeeded: 3, settled: true });
    expect(answer.subscribers.map((s: any) => [s.host, s.appliedCommit, s.manifestsEndpoint])).toEqual([
      ['e-api-1', c3, branch.endpoint('api')],
      ['e-api-2', c3, branch.endpoint('api')],
      ['e-web-1', c2, branch.endpoint('web')],
    ]);
    // A failure on a later commit fails the gate for c2.
    await send([branch.state('e-api-2', 'api', c3, 'failure', 12)]);
    answer = (await gate({ environment: branch.environment, commit: c2 })).body;
    expect(answer).toMatchObject({ failed: 1, succeeded: 2, settled: true });
  });

  it('judges only the targets whose branch has carried the commit', async () => {
    const app = new Branch();
    // A second repository in the same environment: its branch never carries app's commits.
    const other = new Branch(app.environment);
    const [a1, o1] = [randomCommit(), randomCommit()];
    await send([app.descriptor('api', '1.0', a1, 0), other.descriptor('db', '9.0', o1, 0)]);
    await send([...app.applied([['m-api', 'api']], a1, 1), ...other.applied([['m-db', 'db']], o1, 1)]);
    const answer = (await gate({ environment: app.environment, commit: a1 })).body;
    expect(answer).toMatchObject({ total: 1, succeeded: 1, settled: true });
    expect(answer.targets.map((t: any) => t.manifestsEndpoint)).toEqual([app.endpoint('api')]);
  });

  it('pages its subscribers and targets beyond limit, those holding the rollout up first, with every count on every page', async () => {
    const branch = new Branch();
    const commit = randomCommit();
    const targets = ['a', 'b', 'c', 'd'];
    await send(targets.map((target) => branch.descriptor(target, '1.0', commit, 0)));
    const fleet = targets.flatMap((target) => [1, 2].map((n): [string, string] => [`p-${target}-${n}`, target]));
    // c holds the rollout up with a failure; p-d-1 has only ever applied another commit.
    await send([...branch.applied(fleet.filter(([host]) => host !== 'p-d-1'), commit, 1), branch.state('p-d-1', 'd', randomCommit(), 'success', 1)]);
    await send([branch.state('p-c-2', 'c', commit, 'failure', 4)]);
    const ask = (query: Record<string, string>) => gate({ environment: branch.environment, commit, ...query });
    const whole = (await ask({})).body;
    expect(whole).toMatchObject({ total: 8, succeeded: 6, failed: 1, inProgress: 1, targetsTotal: 4, nextCursor: null, nextTargetsCursor: null });
    expect(whole.subscribers.slice(0, 2).map((s: any) => [s.host, s.status])).toEqual([
      ['p-c-2', 'failure'],
      ['p-d-1', 'in_progress'],
    ]);
    expect(whole.targets.map((t: any) => t.workload)).toEqual(['c', 'd', 'a', 'b']);

    const subscribers: string[] = [];
    const pagedTargets: string[] = [];
    let query: Record<string, string> = { limit: '3' };
    for (let pages = 0; pages < 10; pages += 1) {
      const page = (await ask(query)).body;
      expect(page).toMatchObject({ total: 8, succeeded: 6, failed: 1, inProgress: 1, targetsTotal: 4 });
      subscribers.push(...page.subscribers.map((s: any) => s.host));
      // Targets: those of the first page, then of each page their own cursor asked for.
      if (!('cursor' in query) || 'targetsCursor' in query) pagedTargets.push(...page.targets.map((t: any) => t.workload));
      if (page.nextCursor === null) break;
      query = { limit: '3', cursor: page.nextCursor, ...(page.nextTargetsCursor === null ? {} : { targetsCursor: page.nextTargetsCursor }) };
    }
    expect(subscribers).toEqual(whole.subscribers.map((s: any) => s.host));
    expect(pagedTargets).toEqual(['c', 'd', 'a', 'b']);
    expect((await ask({ targetsCursor: 'nonsense' })).body.error.message).toMatch(/^targetsCursor: /);

    // What the notifier reads of a page is what the whole answer says: failing hosts, the longest
    // silence of those live, the versions.
    const context = { asOf: new Date(), staleAfterMs: 15 * 60_000 };
    const [paged, all] = await Promise.all([
      environmentGateReport(hub.database.db, context, branch.environment, commit, { limit: 1 }),
      environmentGateReport(hub.database.db, context, branch.environment, commit, { limit: undefined }),
    ]);
    expect(paged.answer.subscribers).toHaveLength(1);
    expect(paged.failedHosts).toBe(1);
    expect(paged.versions).toEqual(new Set(['1.0']));
    const oldest = Math.min(...all.answer.subscribers.filter((s) => s.status !== 'stale').map((s) => Date.parse(s.lastSeenAt)));
    expect(paged.oldestLiveSeenAt?.getTime()).toBe(oldest);
    expect({ ...paged, answer: undefined }).toEqual({ ...all, answer: undefined });
  });

  it('pages through hosts with several reconcilers each, a page ending within a host, the same as one answer', async () => {
    const branch = new Branch();
    const commit = randomCommit();
    const targets = ['x', 'y', 'z'];
    await send(targets.map((target) => branch.descriptor(target, '2.0', commit, 0)));
    const fleet = ['q-1', 'q-2', 'q-3', 'q-4'].flatMap((host) => targets.map((target): [string, string] => [host, target]));
    await send(branch.applied(fleet, commit, 1));
    await send([branch.state('q-3', 'y', commit, 'failure', 4), branch.state('q-1', 'z', commit, 'failure', 4)]);
    const whole = (await gate({ environment: branch.environment, commit })).body;
    const key = (s: any) => `${s.host} ${s.reconciler} ${s.status}`;
    expect(whole.subscribers.slice(0, 2).map(key)).toEqual(['q-1 flux-system/z failure', 'q-3 flux-system/y failure']);
    for (const limit of [1, 2, 5]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 20; pages += 1) {
        const page = (await gate({ environment: branch.environment, commit, limit: String(limit), ...(cursor === undefined ? {} : { cursor }) })).body;
        seen.push(...page.subscribers.map(key));
        if (page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      expect(seen, `pages of ${limit}`).toEqual(whole.subscribers.map(key));
    }
  });

  it('answers 404 for an unknown environment and 400 without a scope', async () => {
    expect((await gate({ environment: randomName('nowhere'), commit: randomCommit() })).status).toBe(404);
    expect((await gate({ commit: randomCommit() })).body.error.message).toMatch(/^manifestsEndpoint, environment: /);
  });
});

describe('one verdict', () => {
  it('a converged rollout that regressed is failed now, in Delivery as in the gate, with its history kept', async () => {
    const branch = new Branch();
    const commit = randomCommit();
    const hosts: [string, string][] = [
      ['v-1', 'shop'],
      ['v-2', 'shop'],
      ['v-3', 'shop'],
    ];
    await send([branch.descriptor('shop', '4.2', commit, 0)]);
    await send(branch.applied(hosts, commit, 1));
    await send([branch.state('v-2', 'shop', commit, 'failure', 20)]);
    const gated = (await gate({ manifestsEndpoint: branch.endpoint('shop'), commit })).body;
    expect(gated).toMatchObject({ total: 3, succeeded: 2, failed: 1 });
    const since = branch.at(-5).toISOString();
    const [rollout] = (await get(`/metrics/delivery?since=${since}&environment=${branch.environment}`)).body.recentRollouts;
    expect(rollout).toMatchObject({ status: 'failed', current: true, regressedOn: ['v-2'], subscribers: 3, succeeded: 2, failed: 1, convergence100Seconds: 20 });
  });
});
