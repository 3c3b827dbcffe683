// The CRD watcher against a stand-in API server speaking the real protocol to the real
// @kubernetes/client-node: resources reach PostgreSQL, statuses come back, and the watch
// survives dropped connections and expired resource versions.
import { randomBytes, randomUUID } from 'node:crypto';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { AZURE_RESOURCE_GRAPHS, DEPLOYMENT_DESCRIPTORS, FLUX_KUSTOMIZATIONS, RECONCILERS } from '../../src/sources/kube/kube-objects.ts';
import { AzureStandIn } from '../support/azure-standin.ts';
import { testTls } from '../support/global-tls.ts';
import { fluxConfigurationRow } from '../support/flux-configurations.ts';
import { type FakeKubeApiServer, SECRETS } from '../support/kube-apiserver.ts';
import { type KubeHub, startKubeHub } from '../support/kube-hub.ts';
import { isAllowed, loadHubRoles, requestAttributes } from '../support/rbac.ts';
import type { TestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

const HEX = '4f6e2a9c1d3b5e7f9a0b2c4d6e8f0a1b3c5d7e9f';
const HEX2 = '0d5c1a7e9b3f4c2d8e6a1b0c9d8e7f6a5b4c3d2e';
let kube: KubeHub;
let api: FakeKubeApiServer;
let azure: AzureStandIn;
let testDb: TestDatabase;
let hub: RunningHub;
let clock = Date.UTC(2026, 10, 20, 9, 0);

function descriptor(name: string, options: { commit?: string; version?: string; labels?: Record<string, string>; environment?: string } = {}) {
  return {
    metadata: { name, namespace: 'dev', ...(options.labels === undefined ? {} : { labels: options.labels }) },
    spec: {
      workload: {
        name: 'hello-world',
        source: { repo: 'https://github.com/kaizentm/hello-world', branch: 'main', path: '.' },
        application: { name: 'greeting-service', workspace: { name: 'kaizentm' } },
      },
      deploymentTarget: {
        name: `target-${name}`,
        environment: options.environment ?? 'dev',
        manifests: {
          repo: 'https://github.com/kaizentm/hello-world-gitops',
          branch: 'dev',
          path: `target-${name}`,
          ...(options.commit === undefined ? {} : { commit: options.commit }),
        },
      },
      workloadVersion: { version: options.version ?? '0.0.1', build: 'build-1', commit: 'ca9ee9d0ff9ec52b998fdcf64e128c84ddd0e661', buildTime: '2026-11-19T23:25:05Z' },
    },
  };
}

function reconciler(name: string, deployment: Record<string, unknown>, spec: Record<string, unknown> = {}) {
  return {
    metadata: { name, namespace: 'dev' },
    spec: {
      hostName: `host-${name}`,
      reconcilerName: 'flux-system/hello-world',
      reconcilerType: 'flux',
      manifestsEndpoint: 'https://github.com/kaizentm/hello-world-gitops/dev/functional-test',
      deployment,
      ...spec,
    },
  };
}

/** kalypso_kube_watch_errors_total of one resource, as the hub's /metrics says it (0 before the first). */
async function watchErrors(resource: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${hub.ports.http}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`kalypso_kube_watch_errors_total{resource="${resource}"}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

const ready = (object: any) => object?.status?.conditions?.find((condition: any) => condition.type === 'Ready');

beforeAll(async () => {
  azure = new AzureStandIn(await testTls());
  await azure.start();
  azure.clients.set('sp-arg', 'arg-secret');
  azure.rows = [fluxConfigurationRow({ cluster: 'arg-cluster', commit: HEX, compliance: 'Compliant' })];
  process.env.AZURE_AUTHORITY_HOST = azure.url;
  kube = await startKubeHub({ flags: ['--arm-endpoint', azure.url] });
  ({ api, testDb, hub } = kube);
  // The API server's clock only: the hub keeps the real one.
  api.now = () => new Date(clock);
});

afterAll(async () => {
  await kube.stop();
  await azure.stop();
  delete process.env.AZURE_AUTHORITY_HOST;
});

beforeEach(() => {
  clock += 60_000;
});

const assignments = (target: string) =>
  testDb.query<{ version: string; commit: string }>(
    `SELECT v.version, a.gitops_commit_id AS commit FROM deployment_assignment a
       JOIN deployment_target t ON t.id = a.deployment_target_id JOIN workload_version v ON v.id = a.workload_version_id
      WHERE t.name = $1 ORDER BY a.assigned_at`,
    [target],
  );
const stateOf = async (host: string) =>
  (
    await testDb.query<{ commit: string; status: string; message: string }>(
      `SELECT s.gitops_commit_id AS commit, s.status, s.status_message AS message FROM deployment_state s
         JOIN host h ON h.id = s.host_id WHERE h.name = $1`,
      [host],
    )
  )[0];
const historyOf = (host: string) =>
  testDb.query<{ commit: string; status: string }>(
    `SELECT h.gitops_commit_id AS commit, h.status FROM deployment_state_history h
       JOIN reconciler r ON r.id = h.reconciler_id JOIN host ON host.id = r.host_id WHERE host.name = $1 ORDER BY h.observed_at, h.id`,
    [host],
  );

describe('DeploymentDescriptor', () => {
  it('records the assignment and writes gitOpsCommitId and Ready=True back', async () => {
    api.apply(DEPLOYMENT_DESCRIPTORS, descriptor('explicit', { commit: `dev@sha1:${HEX}` }));
    await waitFor(async () => (await assignments('target-explicit')).length === 1, 'the assignment');
    expect(await assignments('target-explicit')).toEqual([{ version: '0.0.1', commit: HEX }]);
    const object = await waitFor(() => (ready(api.get(DEPLOYMENT_DESCRIPTORS, 'dev', 'explicit'))?.status === 'True' ? api.get(DEPLOYMENT_DESCRIPTORS, 'dev', 'explicit') : undefined), 'Ready=True');
    expect(object.status.gitOpsCommitId).toBe(HEX);
    expect(ready(object)).toMatchObject({ status: 'True', reason: 'Recorded', observedGeneration: 1 });
    expect(object.metadata.managedFields.find((entry: any) => entry.subresource === 'status')).toBeDefined();
  });

  it('waits for the Flux Kustomization named in its labels, then takes its applied revision', async () => {
    const labels = { 'kustomize.toolkit.fluxcd.io/name': 'hello-world-gitops', 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system' };
    api.apply(DEPLOYMENT_DESCRIPTORS, descriptor('via-flux', { labels }));
    const waiting = await waitFor(() => ready(api.get(DEPLOYMENT_DESCRIPTORS, 'dev', 'via-flux')), 'Ready=False');
    expect(waiting).toMatchObject({ status: 'False', reason: 'WaitingForKustomization', message: 'waiting for Kustomization flux-system/hello-world-gitops' });

    api.apply(FLUX_KUSTOMIZATIONS, { metadata: { name: 'hello-world-gitops', namespace: 'flux-system' }, spec: { path: './', sourceRef: { kind: 'GitRepository', name: 'gitops' } } }, 'flux');
    await waitFor(() => ready(api.get(DEPLOYMENT_DESCRIPTORS, 'dev', 'via-flux'))?.message.includes('lastAppliedRevision'), 'waiting for the revision');
    expect(await assignments('target-via-flux')).toEqual([]);

    api.setStatus(FLUX_KUSTOMIZATIONS, 'flux-system', 'hello-world-gitops', { lastAppliedRevision: `dev@sha1:${HEX2}` }, 'kustomize-controller');
    await waitFor(async () => (await assignments('target-via-flux')).length === 1, 'the assignment');
    expect(await assignments('target-via-flux')).toEqual([{ version: '0.0.1', commit: HEX2 }]);
    const object = await waitFor(() => (ready(api.get(DEPLOYMENT_DESCRIPTORS, 'dev', 'via-flux'))?.status === 'True' ? api.get(DEPLOYMENT_DESCRIPTORS, 'dev', 'via-flux') : undefined), 'Ready=True');
    expect(object.status.gitOpsCommitId).toBe(HEX2);
  });

  it('follows the Kustomization its labels name now, after they are changed to another one', async () => {
    const [first, second] = [`ks-${randomUUID().slice(0, 8)}`, `ks-${randomUUID().slice(0, 8)}`];
    const name = `relabelled-${randomUUID().slice(0, 8)}`;
    const [firstCommit, secondCommit] = [randomBytes(20).toString('hex'), randomBytes(20).toString('hex')];
    const labels = (kustomization: string) => ({ 'kustomize.toolkit.fluxcd.io/name': kustomization, 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system' });
    for (const kustomization of [first, second]) {
      api.apply(FLUX_KUSTOMIZATIONS, { metadata: { name: kustomization, namespace: 'flux-system' }, spec: { path: './', sourceRef: { kind: 'GitRepository', name: 'gitops' } } }, 'flux');
    }
    const message = () => ready(api.get(DEPLOYMENT_DESCRIPTORS, 'dev', name))?.message as string | undefined;
    api.apply(DEPLOYMENT_DESCRIPTORS, descriptor(name, { labels: labels(first) }));
    await waitFor(() => message()?.endsWith(`Kustomization flux-system/${first}`), 'waiting for the first');
    clock += 1_000;
    api.apply(DEPLOYMENT_DESCRIPTORS, descriptor(name, { labels: labels(second) }));
    await waitFor(() => message()?.endsWith(`Kustomization flux-system/${second}`), 'waiting for the second');

    // The first one's news, taken on its own: the descriptor no longer follows it.
    api.setStatus(FLUX_KUSTOMIZATIONS, 'flux-system', first, { lastAppliedRevision: `dev@sha1:${firstCommit}` }, 'kustomize-controller');
    await hub.kube!.controller!.idle();
    expect(await assignments(`target-${name}`)).toEqual([]);
    clock += 1_000;
    api.setStatus(FLUX_KUSTOMIZATIONS, 'flux-system', second, { lastAppliedRevision: `dev@sha1:${secondCommit}` }, 'kustomize-controller');
    await waitFor(async () => (await assignments(`target-${name}`)).length > 0, 'the assignment');
    expect(await assignments(`target-${name}`)).toEqual([{ version: '0.0.1', commit: secondCommit }]);
    expect(ready(api.get(DEPLOYMENT_DESCRIPTORS, 'dev', name))).toMatchObject({ status: 'True', reason: 'Recorded' });
  });

  it('names the commit fields of a descriptor that has neither a commit nor a Kustomization', async () => {
    const name = `no-commit-${randomUUID().slice(0, 8)}`;
    api.apply(DEPLOYMENT_DESCRIPTORS, descriptor(name));
    expect(await waitFor(() => ready(api.get(DEPLOYMENT_DESCRIPTORS, 'dev', name)), 'Ready')).toMatchObject({
      status: 'False',
      reason: 'Invalid',
      message: expect.stringMatching(/^the labels kustomize\.toolkit\.fluxcd\.io\/name and .* \(or spec\.deploymentTarget\.manifests\.commit\) is missing$/),
    });
    expect(await assignments(`target-${name}`)).toEqual([]);
  });

  it('while its Kustomization is still applying, says a descriptor at fault is invalid rather than waiting', async () => {
    const labels = { 'kustomize.toolkit.fluxcd.io/name': 'applying', 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system' };
    api.apply(FLUX_KUSTOMIZATIONS, { metadata: { name: 'applying', namespace: 'flux-system' }, spec: { path: './', sourceRef: { kind: 'GitRepository', name: 'gitops' } } }, 'flux');
    const since = new Date(clock).toISOString();
    api.setStatus(
      FLUX_KUSTOMIZATIONS,
      'flux-system',
      'applying',
      { lastAppliedRevision: `dev@sha1:${HEX}`, conditions: [{ type: 'Ready', status: 'Unknown', reason: 'Progressing', message: 'Reconciliation in progress', lastTransitionTime: since }] },
      'gotk-kustomize-controller',
    );
    clock += 2_000;
    const valid = descriptor('applied-now', { labels });
    const broken = descriptor('broken-now', { labels });
    delete (broken.spec.deploymentTarget as any).environment;
    api.apply(DEPLOYMENT_DESCRIPTORS, valid, 'kustomize-controller');
    api.apply(DEPLOYMENT_DESCRIPTORS, broken, 'kustomize-controller');
    expect(await waitFor(() => ready(api.get(DEPLOYMENT_DESCRIPTORS, 'dev', 'broken-now')), 'Ready on the broken one')).toMatchObject({
      status: 'False',
      reason: 'Invalid',
      message: 'spec.deploymentTarget.environment is missing',
    });
    expect(await waitFor(() => ready(api.get(DEPLOYMENT_DESCRIPTORS, 'dev', 'applied-now')), 'Ready on the valid one')).toMatchObject({
      status: 'False',
      reason: 'WaitingForKustomization',
    });
    expect(await assignments('target-applied-now')).toEqual([]);
  });

  it('reports an invalid descriptor by the field at fault and goes on with the others', async () => {
    const broken = descriptor('broken', { commit: HEX });
    delete (broken.spec.deploymentTarget as any).environment;
    api.apply(DEPLOYMENT_DESCRIPTORS, broken);
    api.apply(DEPLOYMENT_DESCRIPTORS, descriptor('healthy', { commit: HEX }));
    expect(await waitFor(() => ready(api.get(DEPLOYMENT_DESCRIPTORS, 'dev', 'broken')), 'Ready on the broken one')).toMatchObject({
      status: 'False',
      reason: 'Invalid',
      message: 'spec.deploymentTarget.environment is missing',
    });
    await waitFor(async () => (await assignments('target-healthy')).length === 1, 'the healthy one');
  });
});

describe('Reconciler', () => {
  it('records real state like an OTLP report, and each change as a transition', async () => {
    api.apply(RECONCILERS, reconciler('r1', { gitOpsCommitId: `dev/${HEX}`, status: 'in_progress', statusMessage: 'Reconciling' }));
    await waitFor(async () => (await stateOf('host-r1'))?.status === 'in_progress', 'in progress');
    clock += 30_000;
    api.apply(RECONCILERS, reconciler('r1', { gitOpsCommitId: `dev/${HEX}`, status: 'success', statusMessage: 'Resource is Ready' }));
    await waitFor(async () => (await stateOf('host-r1'))?.status === 'success', 'success');
    expect(await stateOf('host-r1')).toEqual({ commit: HEX, status: 'success', message: 'Resource is Ready' });
    expect(await historyOf('host-r1')).toEqual([
      { commit: HEX, status: 'in_progress' },
      { commit: HEX, status: 'success' },
    ]);
    expect(await waitFor(() => ready(api.get(RECONCILERS, 'dev', 'r1'))?.status === 'True' && ready(api.get(RECONCILERS, 'dev', 'r1')), 'Ready')).toMatchObject({
      reason: 'Recorded',
    });
  });

  it('keeps the type of a Reconciler written with the original hub’s spec.type, which the CRD declares', async () => {
    api.apply(RECONCILERS, reconciler('older', { gitOpsCommitId: HEX, status: 'success' }, { reconcilerType: undefined, type: 'argocd', unknownField: 'pruned' }));
    expect(api.get(RECONCILERS, 'dev', 'older')!.spec).toMatchObject({ type: 'argocd' });
    expect(api.get(RECONCILERS, 'dev', 'older')!.spec.unknownField).toBeUndefined();
    const [row] = await waitFor(
      async () => {
        const rows = await testDb.query<{ type: string }>(`SELECT r.type FROM reconciler r JOIN host h ON h.id = r.host_id WHERE h.name = 'host-older'`);
        return rows.length > 0 ? rows : undefined;
      },
      'the reconciler',
    );
    expect(row).toEqual({ type: 'argocd' });
  });

  it('takes a deleted Reconciler out of the current state and keeps its history', async () => {
    api.apply(RECONCILERS, reconciler('r2', { gitOpsCommitId: HEX, status: 'success' }));
    await waitFor(async () => (await stateOf('host-r2')) !== undefined, 'recorded');
    clock += 30_000;
    api.delete(RECONCILERS, 'dev', 'r2');
    await waitFor(async () => (await stateOf('host-r2')) === undefined, 'removed');
    expect(await historyOf('host-r2')).toHaveLength(1);
    const [row] = await testDb.query<{ removed: boolean }>(
      `SELECT r.removed_at IS NOT NULL AS removed FROM reconciler r JOIN host h ON h.id = r.host_id WHERE h.name = 'host-r2'`,
    );
    expect(row).toEqual({ removed: true });
  });

  it('marks invalid resources Ready=False naming the field, without blocking the valid ones', async () => {
    api.apply(RECONCILERS, { metadata: { name: 'no-host', namespace: 'dev' }, spec: { manifestsEndpoint: 'x/y/z', deployment: { gitOpsCommitId: HEX, status: 'success' } } });
    api.apply(RECONCILERS, reconciler('fine', { gitOpsCommitId: HEX, status: 'success' }));
    expect(await waitFor(() => ready(api.get(RECONCILERS, 'dev', 'no-host')), 'no host')).toMatchObject({
      status: 'False',
      reason: 'Invalid',
      message: 'spec.hostName is missing',
    });
    await waitFor(async () => (await stateOf('host-fine')) !== undefined, 'the valid one');
  });

  it('records a status or type it does not know as the original hub did, saying so in Ready, and lets a Reconciler without a deployment wait', async () => {
    api.apply(RECONCILERS, reconciler('odd-values', { gitOpsCommitId: HEX, status: 'done' }, { reconcilerType: 'kalypso-agent' }));
    api.apply(RECONCILERS, reconciler('registered', undefined as unknown as Record<string, unknown>));
    expect(await waitFor(() => ready(api.get(RECONCILERS, 'dev', 'odd-values')), 'odd values')).toEqual(
      expect.objectContaining({
        status: 'True',
        reason: 'Recorded',
        message:
          `in_progress at ${HEX} recorded for host-odd-values; warning: spec.reconcilerType must be one of flux, argocd, arc, wo, custom (got "kalypso-agent"): recorded as custom; ` +
          'spec.deployment.status must be one of success, failure, in_progress (got "done"): recorded as in_progress',
      }),
    );
    expect(await stateOf('host-odd-values')).toMatchObject({ commit: HEX, status: 'in_progress' });
    expect(await waitFor(() => ready(api.get(RECONCILERS, 'dev', 'registered')), 'registered')).toMatchObject({
      status: 'False',
      reason: 'WaitingForDeployment',
      message: 'spec.deployment is not set: nothing to record until it names a commit',
    });
    expect(await stateOf('host-registered')).toBeUndefined();
  });
});

describe('AzureResourceGraph', () => {
  it('reports an invalid spec by field', async () => {
    api.apply(AZURE_RESOURCE_GRAPHS, { metadata: { name: 'bad', namespace: 'dev' }, spec: { subscription: 's', tenant: 't', interval: 'soon' } });
    expect(await waitFor(() => ready(api.get(AZURE_RESOURCE_GRAPHS, 'dev', 'bad')), 'invalid')).toMatchObject({
      status: 'False',
      reason: 'Invalid',
      message: 'spec.interval must be a duration such as 30s or 5m (got "soon")',
    });
  });

  it('starts a poll loop with the client secret of its secretRef, reports each poll, and stops when deleted', async () => {
    api.apply(SECRETS, {
      metadata: { name: 'arg-credentials', namespace: 'kalypso-system' },
      data: { clientId: Buffer.from('sp-arg').toString('base64'), clientSecret: Buffer.from('arg-secret').toString('base64') },
    });
    api.apply(AZURE_RESOURCE_GRAPHS, {
      metadata: { name: 'fleet', namespace: 'kalypso-system' },
      spec: { subscription: 'sub-1', tenant: 'tenant-1', secretRef: { name: 'arg-credentials' }, interval: '10m' },
    });
    const object = await waitFor(
      () => (ready(api.get(AZURE_RESOURCE_GRAPHS, 'kalypso-system', 'fleet'))?.status === 'True' ? api.get(AZURE_RESOURCE_GRAPHS, 'kalypso-system', 'fleet') : undefined),
      'Ready=True after a poll',
    );
    expect(ready(object)).toMatchObject({ reason: 'Polled', message: '1 flux configurations → 2 reconcilers' });
    expect(object.status).toMatchObject({ rowsSeen: 1, lastPollTime: expect.any(String) });
    await waitFor(async () => (await stateOf('arg-cluster'))?.status === 'success', 'the polled state');

    api.delete(AZURE_RESOURCE_GRAPHS, 'kalypso-system', 'fleet');
    await waitFor(() => hub.resourceGraph.get('kalypso-system/fleet') === undefined, 'the poll loop stopped');
  });

  it('takes secretRef as the original hub wrote it, a plain Secret name, and its default workspace and application', async () => {
    const [workspace, application] = [`ws-${randomUUID().slice(0, 8)}`, `app-${randomUUID().slice(0, 8)}`];
    api.apply(SECRETS, {
      metadata: { name: 'plain-credentials', namespace: 'kalypso-system' },
      data: { clientId: Buffer.from('sp-arg').toString('base64'), clientSecret: Buffer.from('arg-secret').toString('base64') },
    });
    api.apply(AZURE_RESOURCE_GRAPHS, {
      metadata: { name: 'plain', namespace: 'kalypso-system' },
      spec: { subscription: 'sub-1', tenant: 'tenant-1', secretRef: 'plain-credentials', interval: '10m', defaultWorkspace: workspace, defaultApplication: application },
    });
    expect(api.get(AZURE_RESOURCE_GRAPHS, 'kalypso-system', 'plain')!.spec).toMatchObject({ secretRef: 'plain-credentials', defaultWorkspace: workspace, defaultApplication: application });
    expect(await waitFor(() => (ready(api.get(AZURE_RESOURCE_GRAPHS, 'kalypso-system', 'plain'))?.status === 'True' ? ready(api.get(AZURE_RESOURCE_GRAPHS, 'kalypso-system', 'plain')) : undefined), 'Ready=True')).toMatchObject({
      reason: 'Polled',
    });
    expect(hub.resourceGraph.get('kalypso-system/plain')!.source).toMatchObject({ defaultWorkspace: workspace, defaultApplication: application });
    api.delete(AZURE_RESOURCE_GRAPHS, 'kalypso-system', 'plain');
    await waitFor(() => hub.resourceGraph.get('kalypso-system/plain') === undefined, 'the poll loop stopped');
  });

  it('reports a wrong secret as an authentication failure', async () => {
    api.apply(SECRETS, {
      metadata: { name: 'stale-credentials', namespace: 'kalypso-system' },
      data: { clientId: Buffer.from('sp-arg').toString('base64'), clientSecret: Buffer.from('expired').toString('base64') },
    });
    api.apply(AZURE_RESOURCE_GRAPHS, {
      metadata: { name: 'stale', namespace: 'kalypso-system' },
      spec: { subscription: 'sub-1', tenant: 'tenant-1', secretRef: { name: 'stale-credentials' }, interval: '10m' },
    });
    const condition = await waitFor(() => ready(api.get(AZURE_RESOURCE_GRAPHS, 'kalypso-system', 'stale')), 'Ready=False');
    expect(condition).toMatchObject({ status: 'False', reason: 'AuthenticationFailed' });
    expect(condition.message).toContain('AADSTS7000215');
  });
});

describe('watch resilience', () => {
  it('reconnects after connections drop abruptly, without a tight loop, and counts the broken watch in /metrics', async () => {
    const before = api.watchRequests('reconcilers');
    const errorsBefore = await watchErrors('reconcilers');
    api.closeWatches({ abrupt: true });
    clock += 1_000;
    api.apply(RECONCILERS, reconciler('after-drop', { gitOpsCommitId: HEX, status: 'success' }));
    await waitFor(async () => (await stateOf('host-after-drop')) !== undefined, 'a change made after the drop', 15_000);
    // One restart (with backoff), not a storm.
    expect(api.watchRequests('reconcilers') - before).toBeLessThanOrEqual(3);
    // What the PrometheusRule's KalypsoCrdWatchFailing counts (deploy/prometheus/kalypso-hub-rules.yaml).
    expect(await watchErrors('reconcilers')).toBeGreaterThan(errorsBefore);
  });

  it('re-watches after graceful stream ends with backoff, not in a tight loop', async () => {
    const before = api.watchRequests('reconcilers');
    for (let i = 0; i < 5; i += 1) {
      api.closeWatches({ abrupt: false });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(api.watchRequests('reconcilers') - before).toBeLessThanOrEqual(5);
    clock += 1_000;
    api.apply(RECONCILERS, reconciler('after-ends', { gitOpsCommitId: HEX, status: 'success' }));
    await waitFor(async () => (await stateOf('host-after-ends')) !== undefined, 'a change after the stream ends', 20_000);
  });

  it('relists after 410 Gone without losing or duplicating state', async () => {
    api.apply(RECONCILERS, reconciler('kept', { gitOpsCommitId: HEX, status: 'in_progress' }));
    api.apply(RECONCILERS, reconciler('doomed', { gitOpsCommitId: HEX, status: 'success' }));
    await waitFor(async () => (await stateOf('host-kept')) !== undefined && (await stateOf('host-doomed')) !== undefined, 'both recorded');
    const lists = api.requests.filter((request) => !request.watch && request.method === 'GET' && request.path.endsWith('/reconcilers')).length;

    // While nobody watches, the world changes and the server forgets its history.
    api.closeWatches({ abrupt: true });
    clock += 60_000;
    api.apply(RECONCILERS, reconciler('kept', { gitOpsCommitId: HEX, status: 'success' }));
    api.delete(RECONCILERS, 'dev', 'doomed');
    api.apply(RECONCILERS, reconciler('born', { gitOpsCommitId: HEX, status: 'success' }));
    api.compact();

    await waitFor(async () => (await stateOf('host-kept'))?.status === 'success', 'the missed update', 20_000);
    await waitFor(async () => (await stateOf('host-doomed')) === undefined, 'the missed deletion');
    await waitFor(async () => (await stateOf('host-born')) !== undefined, 'the missed creation');
    expect(api.requests.filter((request) => !request.watch && request.method === 'GET' && request.path.endsWith('/reconcilers')).length).toBeGreaterThan(lists);
    expect(await historyOf('host-kept')).toEqual([
      { commit: HEX, status: 'in_progress' },
      { commit: HEX, status: 'success' },
    ]);
    expect(await historyOf('host-born')).toHaveLength(1);
  });
});

describe('status subresource', () => {
  it('refuses a status PUT with a stale resourceVersion (409); the hub merge-patches instead', async () => {
    const client = api.kubeConfig('someone-else').makeApiClient(CustomObjectsApi);
    api.apply(RECONCILERS, reconciler('contended', { gitOpsCommitId: HEX, status: 'success' }));
    const stale = api.get(RECONCILERS, 'dev', 'contended')!;
    // Another controller's condition (a field the CRD declares: the API server prunes the others).
    const verified = { type: 'Verified', status: 'True', reason: 'Checked', message: 'someone else wrote first' };
    api.setStatus(RECONCILERS, 'dev', 'contended', { conditions: [verified] }, 'other-controller');
    const params = { group: RECONCILERS.group, version: RECONCILERS.version, plural: RECONCILERS.plural, namespace: 'dev', name: 'contended' };
    await expect(client.replaceNamespacedCustomObjectStatus({ ...params, body: { ...stale, status: { note: 'mine' } } })).rejects.toMatchObject({ code: 409 });
    // The hub's merge patch does not conflict, and keeps the other writer's fields.
    const object = await waitFor(() => (ready(api.get(RECONCILERS, 'dev', 'contended'))?.status === 'True' ? api.get(RECONCILERS, 'dev', 'contended') : undefined), 'Ready');
    expect(object.status.conditions).toContainEqual(verified);
  });
});

describe('RBAC', () => {
  it('allows every request the watcher made, and the rules grant nothing it did not use', async () => {
    // This hub runs with the default --argocd auto against an API server that serves Applications,
    // so it reads them: the chart's rules with argocd.enabled.
    const roles = await loadHubRoles({ argocd: { enabled: true }, kube: { clusterName: 'hub-cluster' } });
    const hubRequests = api.requests.filter((request) => request.token === 'hub');
    expect(hubRequests.length).toBeGreaterThan(0);
    for (const request of hubRequests) expect(isAllowed(roles, request), `${request.method} ${request.path}`).toBe(true);
    const used = new Set(hubRequests.map((request) => {
      const { verb, group, resource } = requestAttributes(request);
      return `${group} ${resource} ${verb}`;
    }));
    for (const role of roles.filter((role) => role.kind === 'ClusterRole')) {
      for (const rule of role.rules ?? []) {
        for (const resource of rule.resources) {
          for (const verb of rule.verbs) {
            // Every granted permission on the hub's cluster-wide rules was exercised by these tests.
            expect(used.has(`${rule.apiGroups[0]} ${resource} ${verb}`), `${resource} ${verb} is granted but unused`).toBe(true);
          }
        }
      }
    }
  });
});
