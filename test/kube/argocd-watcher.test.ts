// The CRD watcher reading Argo CD Applications (CONTRACT 3.5, 4) from a stand-in API server that
// speaks the real protocol to the real @kubernetes/client-node: Argo CD's controller is played by
// whole-object writes, as it patches its Applications (no status subresource). Read-only: the hub
// never writes to them. Names and commits are random.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARGOCD_APPLICATIONS, AZURE_RESOURCE_GRAPHS, DEPLOYMENT_DESCRIPTORS, RECONCILERS } from '../../src/sources/kube/kube-objects.ts';
import { apiGet } from '../support/api-get.ts';
import { type AppMoment, type AppShape, applicationObject, moments } from '../support/argocd-applications.ts';
import type { FakeKubeApiServer } from '../support/kube-apiserver.ts';
import { type KubeHub, startKubeHub } from '../support/kube-hub.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { isAllowed, loadHubRoles, requestAttributes } from '../support/rbac.ts';
import { waitFor } from '../support/wait-for.ts';

const MANAGEMENT = randomName('mgmt');
let kube: KubeHub;
let api: FakeKubeApiServer;
/** The API server's clock (its managedFields times), behind the real one: the hub caps times at its own. */
let clock = Date.now() - 10 * 60_000;
const tick = (ms = 5_000): Date => new Date((clock += ms));

beforeAll(async () => {
  kube = await startKubeHub({ flags: ['--kube-cluster-name', MANAGEMENT] });
  api = kube.api;
  api.now = () => new Date(clock);
});

afterAll(async () => {
  await kube.stop();
});

/** Argo CD's controller writing the application as of `moment` (the API server stamps the write). */
function argo(shape: AppShape, moment: (at: Date) => AppMoment): void {
  const { metadata, ...object } = applicationObject(shape, moment(tick()));
  api.apply(ARGOCD_APPLICATIONS, { ...object, metadata: { name: metadata.name, namespace: metadata.namespace, finalizers: metadata.finalizers } }, 'argocd-application-controller');
}

function inCluster(name = randomName('app')): AppShape {
  return { name, destination: { name: 'in-cluster' }, sources: [{ repoURL: 'https://github.com/contoso/platform-gitops', targetRevision: 'prod', path: `apps/${name}` }] };
}

interface StateRow {
  host: string;
  reconciler: string;
  commit: string;
  status: string;
  message: string;
}

const stateOf = (reconciler: string) =>
  kube.testDb.query<StateRow>(
    `SELECT h.name AS host, r.name AS reconciler, s.gitops_commit_id AS commit, s.status, s.status_message AS message
       FROM deployment_state s JOIN reconciler r ON r.id = s.reconciler_id JOIN host h ON h.id = r.host_id
      WHERE r.name LIKE $1 ORDER BY r.name`,
    [`${reconciler}%`],
  );

const historyOf = (reconciler: string) =>
  kube.testDb.query<{ commit: string; status: string }>(
    `SELECT x.gitops_commit_id AS commit, x.status FROM deployment_state_history x JOIN reconciler r ON r.id = x.reconciler_id
      WHERE r.name = $1 ORDER BY x.observed_at, x.id`,
    [reconciler],
  );

/** Waits until the reconciler's state satisfies `check`. */
const stateWhere = (reconciler: string, check: (rows: StateRow[]) => boolean) =>
  waitFor(async () => {
    const rows = await stateOf(reconciler);
    return check(rows) ? rows : undefined;
  }, `the state of ${reconciler}`);

describe('Argo CD Applications through the CRD watcher', () => {
  it('records a synced and healthy in-cluster application on the watched cluster, and the host view shows its sync and health', async () => {
    const shape = inCluster();
    const commit = randomCommit();
    argo(shape, (at) => moments.synced([commit], at));
    const [row] = await stateWhere(`argocd/${shape.name}`, (rows) => rows.length === 1);
    expect(row).toEqual({ host: MANAGEMENT, reconciler: `argocd/${shape.name}`, commit, status: 'success', message: 'successfully synced (all tasks run)' });
    const { body } = await apiGet(kube.hub, `/hosts/${MANAGEMENT}/state`);
    expect(body.reconcilers.find((reconciler: any) => reconciler.reconciler === `argocd/${shape.name}`)).toMatchObject({
      type: 'argocd',
      argocd: { sync: 'Synced', health: 'Healthy', operation: 'Succeeded' },
    });
  });

  it('follows a revision moving on a merge: compared, syncing (Progressing), synced — each a transition', async () => {
    const shape = inCluster();
    const [before, merged] = [randomCommit(), randomCommit()];
    const name = `argocd/${shape.name}`;
    argo(shape, (at) => moments.synced([before], at));
    await stateWhere(name, (rows) => rows[0]?.commit === before);
    argo(shape, (at) => moments.outOfSync([merged], [before], at));
    await stateWhere(name, (rows) => rows[0]?.commit === merged);
    argo(shape, (at) => moments.syncing([merged], at));
    expect(await stateWhere(name, (rows) => rows[0]?.message.startsWith('waiting') === true)).toEqual([expect.objectContaining({ status: 'in_progress' })]);
    argo(shape, (at) => moments.synced([merged], at));
    await stateWhere(name, (rows) => rows[0]?.status === 'success');
    expect(await historyOf(name)).toEqual([
      { commit: before, status: 'success' },
      { commit: merged, status: 'in_progress' },
      { commit: merged, status: 'in_progress' },
      { commit: merged, status: 'success' },
    ]);
  });

  it('a failed sync and Degraded health after a sync are failures of the commit; a refresh that only moves reconciledAt is no transition', async () => {
    const [failing, degraded] = [inCluster(), inCluster()];
    const [first, second] = [randomCommit(), randomCommit()];
    argo(failing, (at) => moments.failed([first], at, 'one or more synchronization tasks completed unsuccessfully (retried 5 times).'));
    argo(degraded, (at) => ({ ...moments.synced([second], at, 'Degraded'), healthMessage: 'Caused by apps/Deployment:api/api' }));
    expect(await stateWhere(`argocd/${failing.name}`, (rows) => rows.length === 1)).toEqual([
      expect.objectContaining({ commit: first, status: 'failure', message: 'one or more synchronization tasks completed unsuccessfully (retried 5 times).' }),
    ]);
    expect(await stateWhere(`argocd/${degraded.name}`, (rows) => rows.length === 1)).toEqual([
      expect.objectContaining({ commit: second, status: 'failure', message: 'Caused by apps/Deployment:api/api' }),
    ]);
    const lastSeen = async () =>
      (await kube.testDb.query<{ last: Date }>(`SELECT s.last_observed_at AS last FROM deployment_state s JOIN reconciler r ON r.id = s.reconciler_id WHERE r.name = $1`, [`argocd/${degraded.name}`]))[0]!.last;
    const seen = await lastSeen();
    argo(degraded, (at) => ({ ...moments.synced([second], at, 'Degraded'), healthMessage: 'Caused by apps/Deployment:api/api' }));
    await waitFor(async () => (await lastSeen()) > seen, 'the sign of life');
    expect(await historyOf(`argocd/${degraded.name}`)).toHaveLength(1);
  });

  it('records a multi-source application as one reconciler per source', async () => {
    const shape: AppShape = {
      name: randomName('payments'),
      destination: { server: 'https://kubernetes.default.svc' },
      sources: [
        { repoURL: 'https://github.com/contoso/charts', targetRevision: 'main', path: 'charts/payments' },
        { repoURL: 'https://github.com/contoso/values', targetRevision: 'prod', ref: 'values' },
      ],
    };
    const revisions = [randomCommit(), randomCommit()];
    argo(shape, (at) => moments.synced(revisions, at));
    const rows = await stateWhere(`argocd/${shape.name}#`, (found) => found.length === 2);
    expect(rows.map((row) => [row.host, row.reconciler, row.commit, row.status])).toEqual([
      [MANAGEMENT, `argocd/${shape.name}#0`, revisions[0], 'success'],
      [MANAGEMENT, `argocd/${shape.name}#1`, revisions[1], 'success'],
    ]);
  });

  it('keeps mapping an application while its finalizer runs, takes it out once it is gone, and keeps its history', async () => {
    const shape = inCluster();
    const name = `argocd/${shape.name}`;
    argo(shape, (at) => moments.synced([randomCommit()], at));
    await stateWhere(name, (rows) => rows.length === 1);
    tick();
    api.delete(ARGOCD_APPLICATIONS, 'argocd', shape.name);
    expect(api.get(ARGOCD_APPLICATIONS, 'argocd', shape.name)?.metadata.deletionTimestamp).toBeDefined();
    argo(shape, (at) => ({ ...moments.synced([randomCommit()], at, 'Progressing') }));
    await stateWhere(name, (rows) => rows[0]?.status === 'in_progress');
    tick();
    api.apply(ARGOCD_APPLICATIONS, { metadata: { name: shape.name, namespace: 'argocd', finalizers: [] } }, 'argocd-application-controller');
    expect(api.get(ARGOCD_APPLICATIONS, 'argocd', shape.name)).toBeUndefined();
    await stateWhere(name, (rows) => rows.length === 0);
    expect(await historyOf(name)).toHaveLength(2);
  });

  it('puts an unknown cluster destination on the host it names, and moves the reconciler when the destination changes', async () => {
    const shape: AppShape = { ...inCluster(), destination: { name: randomName('aks') } };
    const commit = randomCommit();
    const name = `argocd/${shape.name}`;
    argo(shape, (at) => ({
      ...moments.synced([commit], at),
      sync: { status: 'Unknown', revisions: [commit] },
      health: 'Unknown',
      conditions: [{ type: 'InvalidSpecError', message: `there are no clusters with this name: ${shape.destination.name}` }],
    }));
    expect(await stateWhere(name, (rows) => rows.length === 1)).toEqual([
      { host: shape.destination.name, reconciler: name, commit, status: 'in_progress', message: `there are no clusters with this name: ${shape.destination.name}` },
    ]);
    const moved: AppShape = { ...shape, destination: { server: 'https://10.20.30.40:6443' } };
    argo(moved, (at) => moments.synced([commit], at));
    expect(await stateWhere(name, (rows) => rows.length === 1 && rows[0]!.host === '10.20.30.40')).toEqual([expect.objectContaining({ status: 'success' })]);
  });

  it('only reads Applications: lists and watches them, never writes', () => {
    const writes = api.requests.filter((request) => request.path.includes('/argoproj.io/') && request.method !== 'GET');
    expect(writes).toEqual([]);
    expect(api.requests.some((request) => request.path === '/apis/argoproj.io/v1alpha1/applications' && request.watch)).toBe(true);
  });

  it('RBAC: the chart with argocd.enabled allows every request this hub made, and its Applications rule is exactly the list and watch it used', async () => {
    const roles = await loadHubRoles({ argocd: { enabled: true }, kube: { clusterName: MANAGEMENT } });
    const hubRequests = api.requests.filter((request) => request.token === 'hub');
    for (const request of hubRequests) expect(isAllowed(roles, request), `${request.method} ${request.path}`).toBe(true);
    const used = new Set(hubRequests.map(requestAttributes).filter((attributes) => attributes.group === 'argoproj.io').map((attributes) => `${attributes.resource} ${attributes.verb}`));
    const granted = roles.flatMap((role) => (role.rules ?? []).filter((rule) => rule.apiGroups.includes('argoproj.io')).flatMap((rule) => rule.resources.flatMap((resource) => rule.verbs.map((verb) => `${resource} ${verb}`))));
    expect(granted.sort()).toEqual([...used].sort());
    // Off (the chart's default) grants nothing there.
    expect(JSON.stringify(await loadHubRoles())).not.toContain('argoproj.io');
  });
});

describe('--argocd', () => {
  it('auto: does not watch while Argo CD is not installed (404), and starts once it is', async () => {
    const hub = await startKubeHub({ kinds: [DEPLOYMENT_DESCRIPTORS, RECONCILERS, AZURE_RESOURCE_GRAPHS], flags: ['--kube-resync', '1s', '--kube-cluster-name', 'late-argo'] });
    try {
      const lists = () => hub.api.requests.filter((request) => request.path === '/apis/argoproj.io/v1alpha1/applications' && !request.watch).length;
      await waitFor(() => lists() >= 1, 'a look for Applications');
      expect(hub.api.watchRequests('applications')).toBe(0);
      hub.api.serve(ARGOCD_APPLICATIONS);
      const shape = inCluster();
      const commit = randomCommit();
      hub.api.apply(ARGOCD_APPLICATIONS, applicationObject(shape, moments.synced([commit], new Date(Date.now() - 1_000))), 'argocd-application-controller');
      await waitFor(async () => (await hub.testDb.query(`SELECT 1 FROM reconciler WHERE name = $1`, [`argocd/${shape.name}`])).length === 1, 'the application', 15_000);
      expect(hub.api.watchRequests('applications')).toBeGreaterThan(0);
    } finally {
      await hub.stop();
    }
  });

  it('off: never asks for Applications', async () => {
    const hub = await startKubeHub({ flags: ['--argocd', 'off'] });
    try {
      hub.api.apply(ARGOCD_APPLICATIONS, applicationObject(inCluster(), moments.synced([randomCommit()], new Date(Date.now() - 1_000))), 'argocd-application-controller');
      await hub.hub.kube!.controller!.idle();
      expect(hub.api.requests.filter((request) => request.path.includes('argoproj.io'))).toEqual([]);
      // What the chart's default (argocd.enabled false: --argocd off) grants is all it asked for.
      const roles = await loadHubRoles();
      for (const request of hub.api.requests.filter((each) => each.token === 'hub')) expect(isAllowed(roles, request), `${request.method} ${request.path}`).toBe(true);
      expect(await hub.testDb.query(`SELECT 1 FROM reconciler WHERE type = 'argocd'`)).toEqual([]);
    } finally {
      await hub.stop();
    }
  });
});
