// Several hub replicas against one API server: one leader at a time (on a coordination.k8s.io
// Lease), only the leader writes statuses, and another replica takes over when it goes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { AZURE_RESOURCE_GRAPHS, DEPLOYMENT_DESCRIPTORS, FLUX_KUSTOMIZATIONS, RECONCILERS } from '../../src/sources/kube/kube-objects.ts';
import { FakeKubeApiServer, LEASES } from '../support/kube-apiserver.ts';
import { isAllowed, loadHubRoles } from '../support/rbac.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';
import { waitFor } from '../support/wait-for.ts';

const HEX = '4f6e2a9c1d3b5e7f9a0b2c4d6e8f0a1b3c5d7e9f';
let api: FakeKubeApiServer;
let testDb: TestDatabase;
const hubs: RunningHub[] = [];

const startReplica = async (identity: string): Promise<RunningHub> => {
  const hub = await startTestHub(testDb.url, ['--kube', 'on', '--leader-election-namespace', 'kalypso-system'], {
    kubeConfig: api.kubeConfig(),
    identity,
    leaseDurationMs: 1_500,
    leaseRetryPeriodMs: 200,
  });
  hubs.push(hub);
  return hub;
};

const reconciler = (name: string) => ({
  metadata: { name, namespace: 'dev' },
  spec: {
    hostName: name,
    reconcilerName: 'flux-system/app',
    reconcilerType: 'flux',
    manifestsEndpoint: 'https://github.com/contoso/gitops/dev/app',
    deployment: { gitOpsCommitId: HEX, status: 'success' },
  },
});

const recorded = async (host: string) =>
  (await testDb.query('SELECT 1 FROM deployment_state s JOIN host h ON h.id = s.host_id WHERE h.name = $1', [host])).length === 1;
const statusPatches = (name: string) =>
  api.requests.filter((request) => request.method === 'PATCH' && request.path.endsWith(`/reconcilers/${name}/status`)).length;

beforeAll(async () => {
  api = new FakeKubeApiServer([DEPLOYMENT_DESCRIPTORS, RECONCILERS, AZURE_RESOURCE_GRAPHS, FLUX_KUSTOMIZATIONS]);
  await api.start();
  testDb = await createTestDatabase();
});

afterAll(async () => {
  for (const hub of hubs) await hub.stop();
  await api.stop();
  await testDb.drop();
});

describe('leader election', () => {
  it('waits for a lease held by a silent replica to expire before taking over', async () => {
    api.apply(LEASES, {
      metadata: { name: 'kalypso-hub', namespace: 'kalypso-system' },
      spec: { holderIdentity: 'ghost', leaseDurationSeconds: 1, renewTime: '2026-11-20T09:00:00.000000Z' },
    });
    const first = await startReplica('replica-a');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(first.kube!.isLeader).toBe(false);
    await waitFor(() => first.kube!.isLeader, 'replica-a to take the expired lease', 10_000);
    expect(api.get(LEASES, 'kalypso-system', 'kalypso-hub')?.spec).toMatchObject({ holderIdentity: 'replica-a', leaseTransitions: 1 });
  });

  it('keeps one leader among replicas; only the leader writes statuses', async () => {
    const second = await startReplica('replica-b');
    const [first] = hubs;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(first!.kube!.isLeader).toBe(true);
    expect(second.kube!.isLeader).toBe(false);

    api.apply(RECONCILERS, reconciler('led-by-a'));
    await waitFor(() => recorded('led-by-a'), 'the reconciler recorded');
    await waitFor(() => statusPatches('led-by-a') >= 1, 'its status written');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(statusPatches('led-by-a')).toBe(1);
  });

  it('fails over when the leader stops, and the new leader carries on', async () => {
    const [first, second] = hubs;
    await first!.stop();
    hubs.splice(0, 1);
    // The stopping leader released the lease: the follower need not wait for it to expire.
    expect(api.get(LEASES, 'kalypso-system', 'kalypso-hub')?.spec.holderIdentity).toBeUndefined();
    await waitFor(() => second!.kube!.isLeader, 'replica-b to lead', 5_000);
    await second!.kube!.synced();
    api.apply(RECONCILERS, reconciler('led-by-b'));
    await waitFor(() => recorded('led-by-b'), 'a change handled by the new leader');
    await waitFor(() => statusPatches('led-by-b') === 1, 'its status written by the new leader');
    expect(api.get(LEASES, 'kalypso-system', 'kalypso-hub')?.spec.holderIdentity).toBe('replica-b');
  });
});

describe('RBAC', () => {
  it('allows the lease requests of leader election', async () => {
    const roles = await loadHubRoles();
    const leaseRequests = api.requests.filter((request) => request.path.includes('/leases'));
    expect(leaseRequests.map((request) => request.method).sort()).toEqual(expect.arrayContaining(['GET', 'PUT']));
    for (const request of leaseRequests) expect(isAllowed(roles, request), `${request.method} ${request.path}`).toBe(true);
  });
});
