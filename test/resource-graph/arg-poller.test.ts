// The Resource Graph poller with the real Azure SDK clients (@azure/arm-resourcegraph,
// @azure/identity) against an HTTPS stand-in: paging, throttling, quota pacing, credential
// failures, garbage collection — and the same state as the same facts sent through OTLP.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { createLogger } from '../../src/log/logger.ts';
import { mapFluxConfiguration } from '../../src/normalize/flux-configuration.ts';
import { RecordWriter } from '../../src/store/record-writer.ts';
import { credentialFor } from '../../src/sources/resource-graph/credentials.ts';
import { createResourceGraphMetrics } from '../../src/sources/resource-graph/resource-graph-metrics.ts';
import { ResourceGraphPoller } from '../../src/sources/resource-graph/resource-graph-poller.ts';
import { createResourceGraphQuery } from '../../src/sources/resource-graph/resource-graph-query.ts';
import { Registry } from 'prom-client';
import { connectDatabase } from '../../src/store/connect.ts';
import { AzureStandIn } from '../support/azure-standin.ts';
import { testTls } from '../support/global-tls.ts';
import { connectedClusterRow, fluxConfigurationRow, managedClusterRow, nonCompliantFixture, SUBSCRIPTION, TENANT } from '../support/flux-configurations.ts';
import { buildLogRecords, createExporter, ExportResultCode, exportLogs } from '../support/otlp-client.ts';
import { descriptorRecord } from '../support/records.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';
import { waitFor } from '../support/wait-for.ts';

const HEX = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
let azure: AzureStandIn;
let directory: string;
let testDb: TestDatabase;
let hub: RunningHub;

const APP_KUSTOMIZATION = 'dev.kaizen.greeting-app.hello-world.functional-test';
const APP_ENDPOINT = 'https://github.com/contoso/app-gitops/dev/functional-test';
const row = (cluster: string, extra: Partial<Parameters<typeof fluxConfigurationRow>[0]> = {}) =>
  fluxConfigurationRow({ cluster, commit: HEX, compliance: 'Compliant', ...extra });

function dataset(): unknown[] {
  return [
    nonCompliantFixture(),
    row('store-1', {
      statuses: [
        { name: 'gitops-apps', compliance: 'Compliant', message: `Applied revision: dev@sha1:${HEX}` },
        { name: APP_KUSTOMIZATION, compliance: 'Compliant', message: `Applied revision: dev@sha1:${HEX}` },
      ],
    }),
    row('store-2', { compliance: 'Pending', statuses: [{ name: 'gitops-apps', compliance: 'Pending', message: 'Reconciliation in progress' }] }),
    row('store-3', { statuses: [{ name: 'redis', kind: 'HelmRelease', compliance: 'Compliant', message: 'Release reconciliation succeeded' }] }),
    row('store-4', { kustomizations: { infra: './infra', apps: './apps/store-4' } }),
    // Enough clusters for three pages of 1,000 rows.
    ...Array.from({ length: 2_095 }, (_, index) => row(`gen-${String(index).padStart(4, '0')}`)),
  ];
}

beforeAll(async () => {
  azure = new AzureStandIn(await testTls());
  await azure.start();
  azure.rows = dataset();
  azure.clients.set('sp-fleet', 'right-secret');
  directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-arg-'));
  await writeFile(path.join(directory, 'good-secret'), 'right-secret\n');
  await writeFile(path.join(directory, 'bad-secret'), 'wrong-secret\n');
  const config = path.join(directory, 'arg-config.yaml');
  await writeFile(
    config,
    `- name: fleet
  subscription: ${SUBSCRIPTION}
  tenant: ${TENANT}
  clientId: sp-fleet
  clientSecretFile: ${path.join(directory, 'good-secret')}
  interval: 10m
- name: broken
  subscription: ${SUBSCRIPTION}
  tenant: ${TENANT}
  clientId: sp-fleet
  clientSecretFile: ${path.join(directory, 'bad-secret')}
  interval: 10m
`,
  );
  testDb = await createTestDatabase();
  // The application Kustomization's deployment target is known before the first poll.
  const seed = connectDatabase({ url: testDb.url, poolSize: 1, connectTimeoutMs: 5_000, applicationName: 'seed' }, createLogger('silent'));
  await new RecordWriter(seed.db, createLogger('silent'), { retryAfterSeconds: 1 }).write([
    descriptorRecord({ workspace: 'kaizen', application: 'greeting-app', environment: 'dev', target: 'functional-test', endpoint: APP_ENDPOINT, version: '1.0.0', commit: HEX, at: new Date('2026-11-20T08:00:00Z') }),
  ]);
  await seed.close();
  process.env.AZURE_AUTHORITY_HOST = azure.url;
  hub = await startTestHub(testDb.url, ['--arg-config', config, '--arm-endpoint', azure.url]);
});

afterAll(async () => {
  await hub.stop();
  await azure.stop();
  await testDb.drop();
  await rm(directory, { recursive: true, force: true });
  delete process.env.AZURE_AUTHORITY_HOST;
});

const fleet = () => hub.resourceGraph.get('fleet')!;
const stateOf = (host: string) =>
  testDb.query<{ reconciler: string; type: string; endpoint: string; commit: string; status: string; message: string }>(
    `SELECT r.name AS reconciler, r.type, me.endpoint, s.gitops_commit_id AS commit, s.status, s.status_message AS message
       FROM deployment_state s JOIN reconciler r ON r.id = s.reconciler_id JOIN host h ON h.id = s.host_id
       JOIN manifests_endpoint me ON me.id = s.manifests_endpoint_id
      WHERE h.name = $1 ORDER BY r.name`,
    [host],
  );

async function firstPoll(): Promise<void> {
  for (let i = 0; i < 200 && fleet().lastStatus === undefined; i += 1) await new Promise((resolve) => setTimeout(resolve, 100));
}

describe('Resource Graph poller', () => {
  it('pages through every flux configuration and maps each to real state', async () => {
    await firstPoll();
    expect(fleet().lastStatus).toMatchObject({ ready: true, reason: 'Polled', rowsSeen: 2_100 });
    // Three pages of 1,000 configurations, with one token; then one page of clusters.
    expect(azure.count('query')).toBe(4);
    expect(azure.requests.filter((request) => request.kind === 'query' && request.body.query.startsWith('kubernetesconfigurationresources')).map((request) => request.body.options)).toEqual([
      { $top: 1_000, resultFormat: 'objectArray' },
      { $top: 1_000, $skipToken: expect.any(String), resultFormat: 'objectArray' },
      { $top: 1_000, $skipToken: expect.any(String), resultFormat: 'objectArray' },
    ]);
    expect(azure.requests.find((request) => request.kind === 'query')?.body).toMatchObject({
      subscriptions: [SUBSCRIPTION],
      query: expect.stringContaining("where type == 'microsoft.kubernetesconfiguration/fluxconfigurations'"),
    });

    expect(await stateOf('aks-dev-eus')).toEqual([
      expect.objectContaining({ reconciler: 'dev', type: 'arc', status: 'failure', endpoint: 'https://github.com/contoso/kalypso-gitops/dev/aks-dev-eus' }),
      expect.objectContaining({ reconciler: 'dev-dev', type: 'flux', status: 'success' }),
      expect.objectContaining({ reconciler: APP_KUSTOMIZATION, type: 'flux', status: 'failure', endpoint: APP_ENDPOINT }),
    ]);
    expect(await stateOf('store-1')).toEqual([
      { reconciler: APP_KUSTOMIZATION, type: 'flux', endpoint: APP_ENDPOINT, commit: HEX, status: 'success', message: `Applied revision: dev@sha1:${HEX}` },
      expect.objectContaining({ reconciler: 'gitops', type: 'arc', status: 'success' }),
      expect.objectContaining({ reconciler: 'gitops-apps', type: 'flux', status: 'success' }),
    ]);
    expect((await stateOf('store-2')).map((state) => state.status)).toEqual(['in_progress', 'in_progress']);
    expect((await stateOf('store-3')).map((state) => state.type)).toEqual(['arc']);
    expect((await stateOf('store-4')).map((state) => state.reconciler)).toEqual(['gitops', 'gitops-apps', 'gitops-infra']);
    expect(fleet().lastStatus?.message).toContain('HelmRelease redis is not a Kustomization');
  });

  it('reports a credential failure on its own source without stopping the others', async () => {
    const broken = hub.resourceGraph.get('broken')!;
    await waitFor(() => broken.lastStatus, 'the broken source to report');
    expect(broken.lastStatus).toMatchObject({ ready: false, reason: 'AuthenticationFailed' });
    expect(broken.lastStatus?.message).toContain('AADSTS7000215');
    expect(fleet().lastStatus?.ready).toBe(true);
  });

  it('rides out throttling, with and without Retry-After', async () => {
    const before = azure.requests.length;
    azure.throttleNext({}, { retryAfterSeconds: 1 });
    const outcome = await fleet().pollOnce();
    expect(outcome.rows).toBe(2_100);
    const queries = azure.requests.slice(before).filter((request) => request.kind === 'query');
    // Three pages of configurations, one of clusters.
    expect(queries.map((request) => request.status)).toEqual([429, 429, 200, 200, 200, 200]);
    // Every attempt counts, including the one the SDK retried by itself after Retry-After.
    expect(outcome.requests).toBe(6);
  });

  it('slows down before the quota runs out instead of being refused', async () => {
    azure.setQuota(2, 1_500);
    try {
      const before = azure.requests.length;
      await fleet().pollOnce();
      const queries = azure.requests.slice(before).filter((request) => request.kind === 'query');
      expect(queries.map((request) => request.status)).toEqual([200, 200, 200, 200]);
      // The third page waited for the quota window to reset.
      expect(queries[2]!.at - queries[1]!.at).toBeGreaterThanOrEqual(900);
    } finally {
      azure.setQuota(1_000, 2_000);
    }
  });

  it('removes the reconcilers of a configuration that vanished, keeping their history', async () => {
    azure.rows = dataset().filter((entry: any) => !entry.id.includes('/store-1/'));
    const outcome = await fleet().pollOnce();
    expect(outcome.removed).toBe(3);
    expect(await stateOf('store-1')).toEqual([]);
    const history = await testDb.query(
      `SELECT count(*)::int AS n FROM deployment_state_history h JOIN reconciler r ON r.id = h.reconciler_id JOIN host ON host.id = r.host_id WHERE host.name = 'store-1'`,
    );
    expect(history).toEqual([{ n: 3 }]);
    azure.rows = dataset();
    expect((await fleet().pollOnce()).removed).toBe(0);
    expect(await stateOf('store-1')).toHaveLength(3);
  });

  it('exposes per-source metrics', async () => {
    const text = await (await fetch(`http://127.0.0.1:${hub.ports.http}/metrics`)).text();
    expect(text).toMatch(/kalypso_arg_rows\{source="fleet"\} 2100/);
    expect(text).toMatch(/kalypso_arg_reconcilers_removed_total\{source="fleet"\} 3/);
    expect(text).toMatch(/kalypso_arg_poll_errors_total\{source="broken"\} [1-9]/);
    expect(text).toMatch(/kalypso_arg_last_success_timestamp_seconds\{source="fleet"\} \d+/);
  });

  it('judges liveness by Azure’s word for each cluster, not by when its configuration last changed', async () => {
    const daysAgo = new Date(Date.now() - 3 * 86_400_000).toISOString();
    const configuration = (cluster: string, provider?: 'Microsoft.ContainerService/managedClusters') =>
      fluxConfigurationRow({ cluster, commit: HEX, compliance: 'Compliant', statusUpdatedAt: daysAgo, ...(provider === undefined ? {} : { provider }) });
    const saved = [azure.rows, azure.clusters];
    azure.rows = [
      ...dataset(),
      configuration('arc-steady'),
      configuration('arc-offline'),
      configuration('arc-expired'),
      configuration('aks-running', 'Microsoft.ContainerService/managedClusters'),
      configuration('aks-stopped', 'Microsoft.ContainerService/managedClusters'),
    ];
    azure.clusters = [
      connectedClusterRow({ cluster: 'arc-steady', connectivityStatus: 'Connected', lastConnectivityTime: new Date(Date.now() - 60_000).toISOString() }),
      connectedClusterRow({ cluster: 'arc-offline', connectivityStatus: 'Offline', lastConnectivityTime: new Date(Date.now() - 2 * 3_600_000).toISOString() }),
      connectedClusterRow({ cluster: 'arc-expired', connectivityStatus: 'Expired', lastConnectivityTime: daysAgo }),
      managedClusterRow({ cluster: 'aks-running', powerState: 'Running' }),
      managedClusterRow({ cluster: 'aks-stopped', powerState: 'Stopped' }),
    ];
    try {
      await fleet().pollOnce();
      const statuses = async (host: string) => {
        const response = await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1/hosts/${host}/state`);
        return ((await response.json()) as { reconcilers: { status: string; deployedAt: string }[] }).reconcilers;
      };
      // Compliant on one commit for three days, and connected: succeeded, in that state since then.
      expect((await statuses('arc-steady')).map((r) => [r.status, r.deployedAt])).toEqual([
        ['success', daysAgo],
        ['success', daysAgo],
      ]);
      expect((await statuses('aks-running')).map((r) => r.status)).toEqual(['success', 'success']);
      for (const host of ['arc-offline', 'arc-expired', 'aks-stopped']) expect((await statuses(host)).map((r) => r.status), host).toEqual(['stale', 'stale']);
      // A second poll confirms the steady ones again, and writes no history.
      const history = () => testDb.query<{ n: number }>(`SELECT count(*)::int AS n FROM deployment_state_history`);
      const before = await history();
      await fleet().pollOnce();
      expect(await history()).toEqual(before);
      expect((await statuses('arc-steady')).map((r) => r.status)).toEqual(['success', 'success']);
    } finally {
      [azure.rows, azure.clusters] = saved as [unknown[], unknown[]];
      await fleet().pollOnce();
    }
  });

  it('stores the same state as the same facts sent through OTLP', async () => {
    const otherDb = await createTestDatabase();
    const other = await startTestHub(otherDb.url);
    try {
      const seed = connectDatabase({ url: otherDb.url, poolSize: 1, connectTimeoutMs: 5_000, applicationName: 'seed' }, createLogger('silent'));
      await new RecordWriter(seed.db, createLogger('silent'), { retryAfterSeconds: 1 }).write([
        descriptorRecord({ workspace: 'kaizen', application: 'greeting-app', environment: 'dev', target: 'functional-test', endpoint: APP_ENDPOINT, version: '1.0.0', commit: HEX, at: new Date('2026-11-20T08:00:00Z') }),
      ]);
      await seed.close();
      // The facts of the fixture row, as an edge agent would report them over OTLP.
      const mapping = mapFluxConfiguration(nonCompliantFixture(), new Date());
      const facts = [...mapping.records, ...mapping.pending[0]!.complete(APP_ENDPOINT)];
      const logs = await buildLogRecords(
        facts.map((fact) => ({
          resource: { 'k8s.cluster.name': fact.host.name, 'kalypso.host.type': 'k8s-cluster' },
          eventName: 'kalypso.deployment.state',
          attributes: {
            'kalypso.reconciler.name': fact.reconciler.name,
            'kalypso.reconciler.type': fact.reconciler.type,
            'kalypso.manifests.endpoint': fact.manifests.endpoint,
            'vcs.ref.head.revision': `dev@sha1:${fact.commitId}`,
            'kalypso.deployment.status': fact.status,
          },
          body: fact.statusMessage,
          time: fact.observedAt,
        })),
      );
      const exporter = createExporter('http-protobuf', other.ports);
      expect((await exportLogs(exporter, logs)).code).toBe(ExportResultCode.SUCCESS);
      await exporter.shutdown();
      const viaOtlp = await otherDb.query(
        `SELECT r.name, r.type, me.endpoint, s.gitops_commit_id, s.status, s.status_message, s.observed_at
           FROM deployment_state s JOIN reconciler r ON r.id = s.reconciler_id JOIN manifests_endpoint me ON me.id = s.manifests_endpoint_id ORDER BY r.name`,
      );
      const viaArg = await testDb.query(
        `SELECT r.name, r.type, me.endpoint, s.gitops_commit_id, s.status, s.status_message, s.observed_at
           FROM deployment_state s JOIN reconciler r ON r.id = s.reconciler_id JOIN host h ON h.id = s.host_id
           JOIN manifests_endpoint me ON me.id = s.manifests_endpoint_id WHERE h.name = 'aks-dev-eus' ORDER BY r.name`,
      );
      expect(viaOtlp).toEqual(viaArg);
      expect(viaArg).toHaveLength(3);
    } finally {
      await other.stop();
      await otherDb.drop();
    }
  });

  it('reports an application Kustomization named env.workload.target that several targets match, and takes a configured default', async () => {
    // cart's edge target exists in two workspaces; a three-part name does not say which.
    const endpoint = (workspace: string) => `https://github.com/contoso/${workspace}-gitops/dev/cart-edge`;
    await new RecordWriter(hub.database.db, createLogger('silent'), { retryAfterSeconds: 1 }).write(
      ['north', 'south'].map((workspace) => ({
        ...descriptorRecord({ workspace, application: 'shop', environment: 'dev', target: 'edge', endpoint: endpoint(workspace), version: '2.0.0', commit: HEX, at: new Date() }),
        workload: { name: 'cart', source: undefined },
      })),
    );
    const saved = azure.rows;
    azure.rows = [row('shop-1', { statuses: [{ name: 'dev.cart.edge', compliance: 'Compliant', message: `Applied revision: dev@sha1:${HEX}` }] })];
    const metrics = createResourceGraphMetrics(new Registry());
    const poller = (name: string, defaults: { defaultWorkspace?: string; defaultApplication?: string }) =>
      new ResourceGraphPoller(
        {
          name,
          subscriptions: [SUBSCRIPTION],
          tenant: TENANT,
          defaultWorkspace: defaults.defaultWorkspace,
          defaultApplication: defaults.defaultApplication,
          credential: { kind: 'client-secret-file', clientId: 'sp-fleet', secretFile: path.join(directory, 'good-secret') },
          intervalMs: 600_000,
        },
        {
          sink: new RecordWriter(hub.database.db, createLogger('silent'), { retryAfterSeconds: 1 }),
          db: hub.database.db,
          connect: async (spec) => await createResourceGraphQuery(await credentialFor(spec, process.env, undefined), azure.url, createLogger('silent')),
          metrics,
          log: createLogger('silent'),
          clock: () => new Date(),
        },
        () => undefined,
      );
    const cartState = () => testDb.query<{ endpoint: string }>(
      `SELECT me.endpoint FROM deployment_state s JOIN reconciler r ON r.id = s.reconciler_id JOIN manifests_endpoint me ON me.id = s.manifests_endpoint_id
        WHERE r.name = 'dev.cart.edge'`,
    );
    try {
      const guessed = await poller('names', {}).pollOnce();
      expect(guessed.ignored).toContain(
        '2 deployment targets match dev/cart/edge (north/shop, south/shop): name the Kustomization env.workspace.application.workload.target, or set defaultWorkspace and defaultApplication',
      );
      expect(await cartState()).toEqual([]);
      expect(await metrics.ambiguous.get()).toMatchObject({ values: [{ labels: { source: 'names' }, value: 1 }] });

      const settled = await poller('names-defaulted', { defaultWorkspace: 'south', defaultApplication: 'shop' }).pollOnce();
      expect(settled.ignored).toEqual([]);
      expect(await cartState()).toEqual([{ endpoint: endpoint('south') }]);

      const elsewhere = await poller('names-elsewhere', { defaultWorkspace: 'west', defaultApplication: 'shop' }).pollOnce();
      expect(elsewhere.ignored).toEqual(['no deployment target dev/cart/edge in west/shop is known yet']);
    } finally {
      azure.rows = saved;
    }
  });
});
