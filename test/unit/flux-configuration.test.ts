import { describe, expect, it } from 'vitest';
import { clusterIdOf, clusterLiveness } from '../../src/normalize/azure-clusters.ts';
import { clusterOf, mapFluxConfiguration, targetOfKustomization } from '../../src/normalize/flux-configuration.ts';
import { fluxConfigurationRow, nonCompliantFixture, SUBSCRIPTION } from '../support/flux-configurations.ts';

const POLLED = new Date('2026-11-20T10:00:00Z');
const HEX = '4f6e2a9c1d3b5e7f9a0b2c4d6e8f0a1b3c5d7e9f';

describe('mapFluxConfiguration', () => {
  it('reads status conditions with holes as conditions without fields (Array.prototype.find is given a hole as undefined)', () => {
    const fixture = nonCompliantFixture();
    const statuses = fixture.properties.statuses as { statusConditions: unknown[] }[];
    const holed = {
      ...fixture,
      // eslint-disable-next-line no-sparse-arrays -- the hole is the case.
      properties: { ...fixture.properties, statuses: statuses.map((status) => ({ ...status, statusConditions: [, ...status.statusConditions] })) },
    };
    const [read, expected] = [mapFluxConfiguration(holed, POLLED), mapFluxConfiguration(fixture, POLLED)];
    expect(read.rejected).toBeUndefined();
    expect(read.records).toEqual(expected.records);
  });

  it('maps the non-compliant fixture: the configuration, its own Kustomization, and the failing application', () => {
    const mapping = mapFluxConfiguration(nonCompliantFixture(), POLLED);
    expect(mapping.rejected).toBeUndefined();
    expect(mapping.records).toEqual([
      {
        kind: 'real-state',
        host: { name: 'aks-dev-eus', type: 'k8s-cluster' },
        reconciler: { name: 'dev', type: 'arc' },
        manifests: { storageType: 'git', endpoint: 'https://github.com/contoso/kalypso-gitops/dev/aks-dev-eus', branch: 'https://github.com/contoso/kalypso-gitops/dev', repo: 'https://github.com/contoso/kalypso-gitops' },
        commitId: HEX,
        status: 'failure',
        statusMessage:
          "Kustomization dev.kaizen.greeting-app.hello-world.functional-test: Health check failed after 5m0s: timeout waiting for: [Deployment/hello-world/hello-world status: 'InProgress']",
        observedAt: new Date('2026-11-20T09:19:12Z'),
      },
      {
        kind: 'real-state',
        host: { name: 'aks-dev-eus', type: 'k8s-cluster' },
        reconciler: { name: 'dev-dev', type: 'flux' },
        manifests: { storageType: 'git', endpoint: 'https://github.com/contoso/kalypso-gitops/dev/aks-dev-eus', branch: 'https://github.com/contoso/kalypso-gitops/dev', repo: 'https://github.com/contoso/kalypso-gitops' },
        commitId: HEX,
        status: 'success',
        statusMessage: `Applied revision: dev@sha1:${HEX}`,
        // Since its own Ready transition (the configuration's statusUpdatedAt is its last change).
        observedAt: new Date('2026-11-20T09:14:09Z'),
      },
    ]);
    expect(mapping.pending).toHaveLength(1);
    expect(mapping.pending[0]!.target).toEqual({
      environment: 'dev',
      workspace: 'kaizen',
      application: 'greeting-app',
      workload: 'hello-world',
      deploymentTarget: 'functional-test',
    });
    expect(mapping.pending[0]!.complete('https://github.com/contoso/app-gitops/dev/functional-test')).toMatchObject([{
      reconciler: { name: 'dev.kaizen.greeting-app.hello-world.functional-test', type: 'flux' },
      manifests: { endpoint: 'https://github.com/contoso/app-gitops/dev/functional-test' },
      // No revision in a failed health check's message: the configuration's synced commit is what it applies.
      commitId: HEX,
      status: 'failure',
    }]);
  });

  it('maps compliance states: Compliant → success, Pending/Unknown/Suspended → in progress', () => {
    const status = (compliance: 'Compliant' | 'Pending' | 'Unknown' | 'Suspended') =>
      mapFluxConfiguration(fluxConfigurationRow({ cluster: 'c1', commit: HEX, compliance }), POLLED).records[0]?.status;
    expect(status('Compliant')).toBe('success');
    expect(status('Pending')).toBe('in_progress');
    expect(status('Unknown')).toBe('in_progress');
    expect(status('Suspended')).toBe('in_progress');
  });

  it('maps each of several own Kustomizations at its own path', () => {
    const mapping = mapFluxConfiguration(
      fluxConfigurationRow({ cluster: 'store-7', commit: HEX, compliance: 'Compliant', kustomizations: { infra: './infra', apps: './apps/store-7' } }),
      POLLED,
    );
    expect(mapping.records.map((record) => [record.reconciler.name, record.manifests.endpoint])).toEqual([
      ['gitops', 'https://github.com/contoso/fleet-gitops/dev/infra'],
      ['gitops-infra', 'https://github.com/contoso/fleet-gitops/dev/infra'],
      ['gitops-apps', 'https://github.com/contoso/fleet-gitops/dev/apps/store-7'],
    ]);
  });

  it('ignores HelmReleases and non-Git sources with a note', () => {
    const helm = mapFluxConfiguration(
      fluxConfigurationRow({ cluster: 'c2', commit: HEX, compliance: 'Compliant', statuses: [{ name: 'redis', kind: 'HelmRelease', compliance: 'Compliant', message: 'Release reconciliation succeeded' }] }),
      POLLED,
    );
    expect(helm.records.map((record) => record.reconciler.type)).toEqual(['arc']);
    expect(helm.ignored).toEqual([expect.stringContaining('HelmRelease redis is not a Kustomization')]);
    const bucket = mapFluxConfiguration(fluxConfigurationRow({ cluster: 'c3', commit: HEX, compliance: 'Compliant', sourceKind: 'Bucket' }), POLLED);
    expect(bucket.records).toEqual([]);
    expect(bucket.ignored).toEqual([expect.stringContaining('source kind Bucket has no Git manifests endpoint')]);
  });

  it('rejects a row that is not a flux configuration', () => {
    expect(mapFluxConfiguration({ id: '/subscriptions/x', name: 'y' }, POLLED).rejected).toMatch(/no cluster segment/);
    expect(mapFluxConfiguration({ ...nonCompliantFixture(), properties: { ...nonCompliantFixture().properties, sourceSyncedCommitId: null } }, POLLED).rejected).toMatch(
      /sourceSyncedCommitId is missing/,
    );
  });
});

describe('helpers', () => {
  it('reads the cluster from the 9th segment of the id, lower-cased', () => {
    expect(clusterOf('/subscriptions/s/resourceGroups/rg/providers/Microsoft.Kubernetes/connectedClusters/Store-Berlin/providers/x/y/z')).toBe('store-berlin');
  });

  it('locates deployment targets by Kalypso Kustomization names', () => {
    expect(targetOfKustomization('prod.hello-world.edge')).toEqual({
      environment: 'prod',
      workspace: undefined,
      application: undefined,
      workload: 'hello-world',
      deploymentTarget: 'edge',
    });
    expect(targetOfKustomization('gitops-apps')).toBeUndefined();
    expect(targetOfKustomization('a..b')).toBeUndefined();
  });
});

describe('cluster liveness', () => {
  const polled = new Date('2026-11-23T12:00:00Z');
  const arc = (connectivityStatus: string, lastConnectivityTime: string | null) => ({
    id: '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Kubernetes/connectedClusters/Edge-01',
    type: 'microsoft.kubernetes/connectedclusters',
    connectivityStatus,
    lastConnectivityTime,
    powerState: null,
  });

  it('keeps a steady connected cluster alive days after its configuration last changed', () => {
    const liveness = clusterLiveness(arc('Connected', '2026-11-23T11:58:00Z'), polled)!;
    expect(liveness).toEqual({ clusterId: '/subscriptions/s/resourcegroups/rg/providers/microsoft.kubernetes/connectedclusters/edge-01', state: 'Connected', aliveAt: polled });
    const row = fluxConfigurationRow({ cluster: 'edge-01', commit: HEX, compliance: 'Compliant', statusUpdatedAt: '2026-11-20T09:00:00Z' });
    const records = mapFluxConfiguration(row, polled, liveness).records;
    // Each reconciler: its state since it began, then confirmed at the poll.
    expect(records.map((record) => [record.reconciler.name, record.observedAt.toISOString()])).toEqual([
      ['gitops', '2026-11-20T09:00:00.000Z'],
      ['gitops', polled.toISOString()],
      ['gitops-apps', '2026-11-20T09:00:00.000Z'],
      ['gitops-apps', polled.toISOString()],
    ]);
  });

  it('last hears from an offline or expired cluster at its last heartbeat, from a stopped AKS cluster never', () => {
    expect(clusterLiveness(arc('Offline', '2026-11-23T10:00:00Z'), polled)?.aliveAt).toEqual(new Date('2026-11-23T10:00:00Z'));
    expect(clusterLiveness(arc('Expired', null), polled)?.aliveAt).toBeUndefined();
    const aks = (powerState: string) => ({ id: '/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/aks-1', type: 'Microsoft.ContainerService/managedClusters', powerState });
    expect(clusterLiveness(aks('Running'), polled)).toMatchObject({ state: 'Running', aliveAt: polled });
    expect(clusterLiveness(aks('Stopped'), polled)).toMatchObject({ state: 'Stopped', aliveAt: undefined });
  });

  it('finds a configuration’s cluster by its resource id, whatever the case', () => {
    const row = fluxConfigurationRow({ cluster: 'Edge-01', commit: HEX, compliance: 'Compliant' });
    expect(clusterIdOf(row.id)).toBe(`/subscriptions/${SUBSCRIPTION}/resourcegroups/rg-fleet/providers/microsoft.kubernetes/connectedclusters/edge-01`);
  });
});
