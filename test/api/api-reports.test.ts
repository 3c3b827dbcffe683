// Every /api/v1 report against a known fleet, field by field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { CART, endpointOf, type FleetBuilder, writeKnownFleet } from '../support/known-fleet.ts';
import { stateLog } from '../support/kalypso-logs.ts';
import { buildLogRecords, createExporter, ExportResultCode, exportLogs } from '../support/otlp-client.ts';
import { randomCommit } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';
import { apiGet } from '../support/api-get.ts';

let testDb: TestDatabase;
let hub: RunningHub;
let fleet: FleetBuilder;
const at = (minutesAgo: number) => fleet.ago(minutesAgo).toISOString();

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url);
  fleet = await writeKnownFleet(hub.database.db);
});

afterAll(async () => {
  await hub.stop();
  await testDb.drop();
});

const get = (path: string) => apiGet(hub, path);

const counts = (total: number, succeeded: number, failed = 0, inProgress = 0, stale = 0) => ({ total, succeeded, failed, inProgress, stale });

describe('GET /environments', () => {
  it('lists environments in promotion order with targets, hosts and reconcilers by status', async () => {
    const { status, body } = await get('/environments');
    expect(status).toBe(200);
    expect(body.items).toEqual([
      { name: 'dev', promotionRank: null, deploymentTargets: 3, hosts: 2, reconcilers: counts(6, 4, 1, 1, 0), latestAssignment: { commit: 'c-dev-3', assignedAt: at(60) } },
      { name: 'qa', promotionRank: null, deploymentTargets: 2, hosts: 1, reconcilers: counts(2, 2), latestAssignment: { commit: 'g-qa-2', assignedAt: at(85) } },
      { name: 'staging', promotionRank: null, deploymentTargets: 1, hosts: 1, reconcilers: counts(1, 0, 0, 0, 1), latestAssignment: { commit: 'c-st-2', assignedAt: at(95) } },
      { name: 'prod', promotionRank: null, deploymentTargets: 3, hosts: 4, reconcilers: counts(5, 4, 0, 0, 1), latestAssignment: { commit: 'k-prod-51', assignedAt: at(70) } },
    ]);
  });
});

describe('GET /environments/{environment}/state', () => {
  it('gives each target its desired version and its deployed versions with counts', async () => {
    const { status, body } = await get('/environments/dev/state');
    expect(status).toBe(200);
    expect(body.environment).toBe('dev');
    expect(body.items).toEqual([
      {
        workspace: 'contoso',
        application: 'shop',
        workload: 'cart',
        deploymentTarget: 'edge',
        environment: 'dev',
        manifestsEndpoint: endpointOf('dev', 'cart', 'edge'),
        desired: { version: '5.1', build: 'b-5.1', commit: 'k-dev-51', assignedAt: at(80) },
        deployed: [{ version: '5.1', commit: 'k-dev-51', onDesired: true, reconcilers: counts(2, 1, 0, 1) }],
        reconcilers: counts(2, 1, 0, 1),
      },
      {
        workspace: 'kaizentm',
        application: 'greeting-service',
        workload: 'greeter-api',
        deploymentTarget: 'main',
        environment: 'dev',
        manifestsEndpoint: endpointOf('dev', 'greeter-api', 'main'),
        desired: { version: '2.0.0', build: 'b-2.0.0', commit: 'g-dev-2', assignedAt: at(90) },
        deployed: [{ version: '2.0.0', commit: 'g-dev-2', onDesired: true, reconcilers: counts(2, 1, 1) }],
        reconcilers: counts(2, 1, 1),
      },
      {
        workspace: 'kaizentm',
        application: 'greeting-service',
        workload: 'hello-world',
        deploymentTarget: 'functional-test',
        environment: 'dev',
        manifestsEndpoint: endpointOf('dev', 'hello-world', 'functional-test'),
        desired: { version: '0.0.3', build: 'b-0.0.3', commit: 'c-dev-3', assignedAt: at(60) },
        deployed: [
          { version: '0.0.2', commit: 'c-dev-2', onDesired: false, reconcilers: counts(1, 1) },
          { version: '0.0.3', commit: 'c-dev-3', onDesired: true, reconcilers: counts(1, 1) },
        ],
        reconcilers: counts(2, 2),
      },
    ]);
  });

  it('counts silent reconcilers as stale, never as succeeded', async () => {
    const { body } = await get('/environments/prod/state');
    const hello = body.items.find((item: { workload: string }) => item.workload === 'hello-world');
    expect(hello.deployed).toEqual([{ version: '0.0.1', commit: 'c-prod-1', onDesired: true, reconcilers: counts(3, 2, 0, 0, 1) }]);
  });

  it('answers 404 for an unknown environment', async () => {
    expect(await get('/environments/nowhere/state')).toEqual({
      status: 404,
      body: { error: { code: 'not_found', message: 'environment "nowhere" not found' } },
    });
  });
});

describe('GET /hosts', () => {
  it('lists hosts by name with status counts, environments and staleness', async () => {
    const { body } = await get('/hosts');
    expect(body.items.map((host: { name: string }) => host.name)).toEqual([
      'dev-1', 'dev-2', 'edge-store-7', 'prod-1', 'prod-2', 'prod-3', 'qa-1', 'staging-1',
    ]);
    const byName = Object.fromEntries(body.items.map((host: { name: string }) => [host.name, host]));
    expect(byName['dev-2']).toMatchObject({ type: 'k8s-cluster', lastSeenAt: at(2), stale: false, environments: ['dev'], reconcilers: counts(3, 1, 1, 1), drifting: 1 });
    expect(byName['dev-1']).toMatchObject({ drifting: 0 });
    expect(byName['edge-store-7']).toMatchObject({ type: 'edge-device', environments: ['prod'], reconcilers: counts(1, 1) });
    expect(byName['prod-3']).toMatchObject({ lastSeenAt: at(20), stale: true, reconcilers: counts(1, 0, 0, 0, 1) });
    expect(body.nextCursor).toBeNull();
    expect(body.totals).toEqual({ hosts: 8, offline: 2, failing: 1, drifting: 1 });
  });

  it('filters by environment and by status', async () => {
    const names = async (query: string) => (await get(`/hosts?${query}`)).body.items.map((host: { name: string }) => host.name);
    expect(await names('environment=prod')).toEqual(['edge-store-7', 'prod-1', 'prod-2', 'prod-3']);
    expect(await names('status=stale')).toEqual(['prod-3', 'staging-1']);
    expect(await names('status=failure')).toEqual(['dev-2']);
    expect(await names('environment=dev&status=in_progress')).toEqual(['dev-2']);
  });

  it('pages with a cursor', async () => {
    const first = await get('/hosts?limit=3');
    expect(first.body.items.map((host: { name: string }) => host.name)).toEqual(['dev-1', 'dev-2', 'edge-store-7']);
    const second = await get(`/hosts?limit=3&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(second.body.items.map((host: { name: string }) => host.name)).toEqual(['prod-1', 'prod-2', 'prod-3']);
    const third = await get(`/hosts?limit=3&cursor=${encodeURIComponent(second.body.nextCursor)}`);
    expect(third.body.items.map((host: { name: string }) => host.name)).toEqual(['qa-1', 'staging-1']);
    expect(third.body.nextCursor).toBeNull();
  });
});

describe('GET /hosts/{host}/state', () => {
  it('gives every reconciler with its target, deployed version, commit, status and times', async () => {
    const { status, body } = await get('/hosts/dev-2/state');
    expect(status).toBe(200);
    expect(body).toMatchObject({ name: 'dev-2', type: 'k8s-cluster', lastSeenAt: at(2), stale: false });
    expect(body.reconcilers).toEqual([
      {
        reconciler: 'flux-system/cart',
        type: 'flux',
        manifestsEndpoint: endpointOf('dev', 'cart', 'edge'),
        commit: 'k-dev-51',
        status: 'in_progress',
        reportedStatus: 'in_progress',
        statusMessage: '',
        deployedAt: at(5),
        lastSeenAt: at(5),
        argocd: null,
        deploymentTargets: [
          { workspace: 'contoso', application: 'shop', workload: 'cart', deploymentTarget: 'edge', environment: 'dev', deployedVersion: '5.1', desiredVersion: '5.1', desiredCommit: 'k-dev-51' },
        ],
      },
      {
        reconciler: 'flux-system/greeter-api',
        type: 'flux',
        manifestsEndpoint: endpointOf('dev', 'greeter-api', 'main'),
        commit: 'g-dev-2',
        status: 'failure',
        reportedStatus: 'failure',
        statusMessage: 'health check failed',
        deployedAt: at(30),
        lastSeenAt: at(2),
        argocd: null,
        deploymentTargets: [
          { workspace: 'kaizentm', application: 'greeting-service', workload: 'greeter-api', deploymentTarget: 'main', environment: 'dev', deployedVersion: '2.0.0', desiredVersion: '2.0.0', desiredCommit: 'g-dev-2' },
        ],
      },
      {
        reconciler: 'flux-system/hello-world',
        type: 'flux',
        manifestsEndpoint: endpointOf('dev', 'hello-world', 'functional-test'),
        commit: 'c-dev-2',
        status: 'success',
        reportedStatus: 'success',
        statusMessage: '',
        deployedAt: at(105),
        lastSeenAt: at(2),
        argocd: null,
        deploymentTargets: [
          { workspace: 'kaizentm', application: 'greeting-service', workload: 'hello-world', deploymentTarget: 'functional-test', environment: 'dev', deployedVersion: '0.0.2', desiredVersion: '0.0.3', desiredCommit: 'c-dev-3' },
        ],
      },
    ]);
  });

  it('shows a silent host as stale', async () => {
    const { body } = await get('/hosts/prod-3/state');
    expect(body.stale).toBe(true);
    expect(body.reconcilers[0]).toMatchObject({ status: 'stale', reportedStatus: 'success' });
  });

  it('answers 404 for an unknown host', async () => {
    expect((await get('/hosts/nowhere/state')).status).toBe(404);
  });
});

describe('GET /history', () => {
  const summary = (items: { host: string; commit: string; status: string; observedAt: string }[]) =>
    items.map((item) => `${item.host} ${item.commit} ${item.status} ${item.observedAt}`);

  it('lists a host’s transitions newest first, with target and version', async () => {
    const { body } = await get('/history?host=dev-1');
    expect(summary(body.items)).toEqual([
      `dev-1 g-dev-2 success ${at(3)}`,
      `dev-1 k-dev-51 success ${at(4)}`,
      `dev-1 c-dev-3 success ${at(50)}`,
      `dev-1 c-dev-3 in_progress ${at(55)}`,
      `dev-1 c-dev-2 success ${at(110)}`,
    ]);
    expect(body.items[2]).toMatchObject({
      environment: 'dev',
      workspace: 'kaizentm',
      application: 'greeting-service',
      workload: 'hello-world',
      deploymentTarget: 'functional-test',
      version: '0.0.3',
      reconciler: 'flux-system/hello-world',
      reconcilerType: 'flux',
      manifestsEndpoint: endpointOf('dev', 'hello-world', 'functional-test'),
    });
  });

  it('filters by environment, workload, workspace, application and target', async () => {
    expect(summary((await get('/history?environment=prod')).body.items)).toEqual([
      `prod-1 c-prod-1 success ${at(7)}`,
      `prod-2 c-prod-1 success ${at(8)}`,
      `prod-1 g-prod-19 success ${at(9)}`,
      `edge-store-7 k-prod-51 success ${at(10)}`,
      `prod-3 c-prod-1 success ${at(20)}`,
    ]);
    const hello = (await get('/history?environment=dev&workload=hello-world')).body.items;
    expect(summary(hello)).toEqual([
      `dev-1 c-dev-3 success ${at(50)}`,
      `dev-1 c-dev-3 in_progress ${at(55)}`,
      `dev-2 c-dev-2 success ${at(105)}`,
      `dev-1 c-dev-2 success ${at(110)}`,
    ]);
    expect((await get('/history?workspace=contoso')).body.items).toHaveLength(3);
    expect((await get('/history?application=shop&deploymentTarget=edge&environment=prod')).body.items).toHaveLength(1);
  });

  it('filters by time', async () => {
    const { body } = await get(`/history?since=${encodeURIComponent(at(10))}&until=${encodeURIComponent(at(4))}`);
    // Transitions observed at the same instant come newest-stored first.
    expect(summary(body.items)).toEqual([
      `dev-2 k-dev-51 in_progress ${at(5)}`,
      `qa-1 g-qa-2 success ${at(6)}`,
      `qa-1 c-qa-2 success ${at(6)}`,
      `prod-1 c-prod-1 success ${at(7)}`,
      `prod-2 c-prod-1 success ${at(8)}`,
      `prod-1 g-prod-19 success ${at(9)}`,
      `edge-store-7 k-prod-51 success ${at(10)}`,
    ]);
  });

  it('pages through everything with the cursor, each transition once, newest first', async () => {
    const all = (await get('/history?limit=1000')).body.items;
    expect(all).toHaveLength(16);
    const paged: unknown[] = [];
    let cursor: string | null = null;
    do {
      const { body }: { body: { items: unknown[]; nextCursor: string | null } } = await get(
        `/history?limit=4${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      );
      expect(body.items.length).toBeLessThanOrEqual(4);
      paged.push(...body.items);
      cursor = body.nextCursor;
    } while (cursor !== null);
    expect(paged).toEqual(all);
    const times = all.map((item: { observedAt: string }) => item.observedAt);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it('refuses a bad cursor, limit or time, naming the parameter', async () => {
    expect(await get('/history?cursor=not-a-cursor')).toEqual({
      status: 400,
      body: { error: { code: 'invalid_parameter', message: 'cursor: not a cursor from a previous page' } },
    });
    const limit = await get('/history?limit=5000');
    expect(limit.status).toBe(400);
    expect(limit.body.error.message).toMatch(/^limit: /);
    const since = await get('/history?since=yesterday');
    expect(since.status).toBe(400);
    expect(since.body.error.message).toMatch(/^since: /);
  });
});

describe('GET /compare', () => {
  it('puts any environments side by side and marks what differs', async () => {
    const { status, body } = await get('/compare?environments=dev,qa,staging,prod');
    expect(status).toBe(200);
    expect(body.environments).toEqual(['dev', 'qa', 'staging', 'prod']);
    const rows = Object.fromEntries(body.items.map((item: { workload: string }) => [item.workload, item]));
    expect(Object.keys(rows)).toEqual(['cart', 'greeter-api', 'hello-world']);
    const desired = (workload: string) =>
      Object.fromEntries(
        Object.entries(rows[workload].environments).map(([env, cell]) => [env, (cell as { desired: { version: string } } | null)?.desired.version ?? null]),
      );
    expect(desired('hello-world')).toEqual({ dev: '0.0.3', qa: '0.0.2', staging: '0.0.2', prod: '0.0.1' });
    expect(desired('greeter-api')).toEqual({ dev: '2.0.0', qa: '2.0.0', staging: null, prod: '1.9.0' });
    expect(desired('cart')).toEqual({ dev: '5.1', qa: null, staging: null, prod: '5.1' });
    expect(rows['hello-world']).toMatchObject({ desiredDiffers: true, deployedDiffers: true });
    expect(rows['hello-world'].environments.staging.deployed).toEqual([{ version: '0.0.2', commit: 'c-st-2', onDesired: true, reconcilers: counts(1, 0, 0, 0, 1) }]);
  });

  it('finds no difference where there is none', async () => {
    const { body } = await get('/compare?environments=qa,staging');
    const hello = body.items.find((item: { workload: string }) => item.workload === 'hello-world');
    expect(hello).toMatchObject({ desiredDiffers: false, deployedDiffers: false });
    const greeter = body.items.find((item: { workload: string }) => item.workload === 'greeter-api');
    expect(greeter).toMatchObject({ desiredDiffers: true });
    expect(greeter.environments.staging).toBeNull();
    const cart = (await get('/compare?environments=dev,prod')).body.items.find((item: { workload: string }) => item.workload === 'cart');
    expect(cart).toMatchObject({ desiredDiffers: false, deployedDiffers: false });
  });

  it('pages rows by workspace, application, workload and target, and filters by workspace', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const { body }: { body: any } = await get(`/compare?environments=dev,prod&limit=1${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      expect(body.items.length).toBeLessThanOrEqual(1);
      seen.push(...body.items.map((item: { workload: string }) => item.workload));
      cursor = body.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual(['cart', 'greeter-api', 'hello-world']);
    expect((await get('/compare?environments=dev,prod&workspace=kaizentm')).body.items.map((item: { workload: string }) => item.workload)).toEqual([
      'greeter-api',
      'hello-world',
    ]);
    expect((await get('/compare?environments=dev,prod&cursor=nope')).status).toBe(400);
  });

  it('needs two or more known environments', async () => {
    expect((await get('/compare?environments=dev')).body.error.message).toBe('environments: name at least two environments, comma-separated');
    expect((await get('/compare')).body.error.message).toMatch(/^environments: /);
    expect(await get('/compare?environments=dev,moon')).toEqual({
      status: 404,
      body: { error: { code: 'not_found', message: 'environment "moon" not found' } },
    });
  });
});

describe('GET /drift', () => {
  it('lists reconcilers off their desired commit, failing or stale, longest first, with reasons', async () => {
    const { body } = await get('/drift');
    expect(
      body.items.map((item: { host: string; workload: string; reasons: string[]; driftingSince: string }) => [
        item.host,
        item.workload,
        item.reasons,
        item.driftingSince,
      ]),
    ).toEqual([
      ['dev-2', 'hello-world', ['not_on_desired_commit'], at(60)],
      ['staging-1', 'hello-world', ['stale'], at(40)],
      ['dev-2', 'greeter-api', ['failing'], at(30)],
      ['prod-3', 'hello-world', ['stale'], at(20)],
    ]);
    expect(body.items[0]).toMatchObject({
      environment: 'dev',
      deploymentTarget: 'functional-test',
      desiredVersion: '0.0.3',
      desiredCommit: 'c-dev-3',
      appliedCommit: 'c-dev-2',
      appliedVersion: '0.0.2',
      status: 'success',
    });
    expect(body.items[0].driftingForSeconds).toBeGreaterThanOrEqual(3_600);
  });

  it('filters by environment', async () => {
    const { body } = await get('/drift?environment=dev');
    expect(body.items.map((item: { workload: string }) => item.workload)).toEqual(['hello-world', 'greeter-api']);
    expect((await get('/drift?environment=nowhere')).status).toBe(404);
  });
});

describe('GET /deployment-state (rollout gate)', () => {
  const gate = (endpoint: string, commit: string, extra = '') =>
    get(`/deployment-state?manifestsEndpoint=${encodeURIComponent(endpoint)}&commit=${encodeURIComponent(commit)}${extra}`);
  const helloDev = endpointOf('dev', 'hello-world', 'functional-test');

  it('reports a rollout in progress: one subscriber on the commit, one still on the previous one', async () => {
    const { body } = await gate(helloDev, 'c-dev-3');
    expect(body).toMatchObject({ manifestsEndpoint: helloDev, commit: 'c-dev-3', total: 2, succeeded: 1, failed: 0, inProgress: 1, stale: 0, settled: false });
    // The one holding the rollout up comes first.
    expect(body.subscribers).toEqual([
      {
        host: 'dev-2',
        reconciler: 'flux-system/hello-world',
        reconcilerType: 'flux',
        status: 'in_progress',
        statusMessage: 'applied c-dev-2; c-dev-3 not applied yet',
        appliedCommit: 'c-dev-2',
        observedAt: at(105),
        lastSeenAt: at(2),
        supersededBy: null,
      },
      {
        host: 'dev-1',
        reconciler: 'flux-system/hello-world',
        reconcilerType: 'flux',
        status: 'success',
        statusMessage: '',
        appliedCommit: 'c-dev-3',
        observedAt: at(50),
        lastSeenAt: at(1),
        supersededBy: null,
      },
    ]);
    expect(body.nextCursor).toBeNull();
  });

  it('counts a subscriber that moved on to a newer commit of the endpoint as done', async () => {
    const { body } = await gate(helloDev, 'c-dev-2');
    expect(body).toMatchObject({ total: 2, succeeded: 2, settled: true });
    expect(body.subscribers[0]).toMatchObject({ host: 'dev-1', status: 'success', supersededBy: 'c-dev-3' });
  });

  it('settles with a failure when a subscriber failed', async () => {
    const { body } = await gate(endpointOf('dev', 'greeter-api', 'main'), 'g-dev-2');
    expect(body).toMatchObject({ total: 2, succeeded: 1, failed: 1, settled: true });
    expect(body.subscribers[0]).toMatchObject({ host: 'dev-2', status: 'failure', statusMessage: 'health check failed' });
  });

  it('never counts a stale subscriber as success', async () => {
    const { body } = await gate(endpointOf('prod', 'hello-world', 'functional-test'), 'c-prod-1');
    expect(body).toMatchObject({ total: 3, succeeded: 2, stale: 1, settled: false });
    expect(body.subscribers[0]).toMatchObject({ host: 'prod-3', status: 'stale' });
  });

  it('pages beyond limit, holders first, counting every subscriber on every page', async () => {
    const prodHello = endpointOf('prod', 'hello-world', 'functional-test');
    const whole = (await gate(prodHello, 'c-prod-1')).body;
    expect(whole.subscribers.map((s: { host: string }) => s.host)).toEqual(['prod-3', 'prod-1', 'prod-2']);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const { body } = await gate(prodHello, 'c-prod-1', `&limit=2${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      expect(body).toMatchObject({ total: 3, succeeded: 2, stale: 1, settled: false });
      expect(body.subscribers.length).toBeLessThanOrEqual(2);
      seen.push(...body.subscribers.map((s: { host: string }) => s.host));
      cursor = body.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual(['prod-3', 'prod-1', 'prod-2']);
    const bad = await gate(prodHello, 'c-prod-1', '&cursor=nonsense');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/^cursor: /);
    expect((await gate(prodHello, 'c-prod-1', '&limit=0')).body.error.message).toMatch(/^limit: /);
  });

  it('normalizes the endpoint and has no subscribers for an unknown one', async () => {
    const spelled = 'https://github.com/contoso/gitops.git/dev/./hello-world-functional-test/';
    expect((await gate(spelled, 'c-dev-3')).body).toMatchObject({ manifestsEndpoint: helloDev, total: 2 });
    expect((await gate('https://github.com/contoso/none/main/x', randomCommit())).body).toMatchObject({ total: 0, settled: false, subscribers: [] });
  });

  it('waits until every subscriber settled when asked to', async () => {
    const pending = gate(endpointOf('dev', 'cart', 'edge'), 'k-dev-51', '&wait=20s');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exporter = createExporter('grpc', hub.ports);
    const records = await buildLogRecords([
      stateLog({ host: 'dev-2', reconciler: `flux-system/${CART.workload}`, endpoint: endpointOf('dev', 'cart', 'edge'), commit: 'k-dev-51', at: new Date() }),
    ]);
    expect((await exportLogs(exporter, records)).code).toBe(ExportResultCode.SUCCESS);
    const { body } = await pending;
    expect(body).toMatchObject({ total: 2, succeeded: 2, inProgress: 0, settled: true });
    await exporter.shutdown();
  });

  it('answers unsettled when the wait ends first', async () => {
    const { body } = await gate(helloDev, 'c-dev-3', '&wait=1s');
    expect(body).toMatchObject({ settled: false, inProgress: 1 });
  });

  it('refuses bad parameters, naming them', async () => {
    expect((await get(`/deployment-state?manifestsEndpoint=${encodeURIComponent(helloDev)}`)).body.error.message).toMatch(/^commit: /);
    expect((await get('/deployment-state?commit=c1')).body.error.message).toMatch(/^manifestsEndpoint, environment: give exactly one/);
    expect((await gate(helloDev, 'c-dev-3', '&wait=soon')).body.error).toEqual({
      code: 'invalid_parameter',
      message: 'wait: must be a duration such as 30s or 5m',
    });
    expect((await gate(helloDev, 'c-dev-3', '&wait=10m')).body.error.message).toBe('wait: must be at most 5m');
  });
});

describe('OpenAPI and docs', () => {
  it('serves an OpenAPI 3.1 document describing every endpoint', async () => {
    const { body } = await get('/openapi.json');
    expect(body.openapi).toBe('3.1.0');
    expect(Object.keys(body.paths).sort()).toEqual([
      '/compare',
      '/deployment-state',
      '/drift',
      '/environments',
      '/environments/{environment}/state',
      '/history',
      '/hosts',
      '/hosts/{host}/state',
      '/metrics/delivery',
      '/notifications',
    ]);
    expect(body.components.schemas.Error).toBeDefined();
    expect(body.components.schemas.DeliveryReport).toBeDefined();
  });

  it('serves a browsable reference without a CDN', async () => {
    const page = await fetch(`http://127.0.0.1:${hub.ports.http}/api/docs/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    const bundle = await fetch(`http://127.0.0.1:${hub.ports.http}/api/docs/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
  });

  it('answers unknown routes with the error shape', async () => {
    expect(await get('/nothing')).toEqual({ status: 404, body: { error: { code: 'not_found', message: 'no route for GET /api/v1/nothing' } } });
  });
});
