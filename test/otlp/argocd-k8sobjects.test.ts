// A stock OpenTelemetry Collector watching Argo CD Applications (CONTRACT 3.5): the k8sobjects
// receiver's watch-mode records, sent through the official SDK exporters (gRPC, HTTP protobuf,
// HTTP JSON) or as raw OTLP where the SDK cannot shape a record, become reconciler states that the
// API, the rollout gate and the host view read. Names and commits are random.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { apiGet } from '../support/api-get.ts';
import { type AppShape, applicationObject, applicationRecord, moments } from '../support/argocd-applications.ts';
import { buildLogRecords, createExporter, EXPORTER_KINDS, type ExporterKind, ExportResultCode, exportLogs, type LogSpec } from '../support/otlp-client.ts';
import { httpExport } from '../support/raw-otlp.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { hostCurrentState } from '../support/stored-reports.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

let testDb: TestDatabase;
let hub: RunningHub;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url);
});

afterAll(async () => {
  await hub.stop();
  await testDb.drop();
});

/** Ten minutes ago, in steps of ten seconds: every state stays fresh (stale-after is 15 minutes). */
const START = Date.now() - 10 * 60_000;
const at = (step: number): Date => new Date(Math.floor((START + step * 10_000) / 1_000) * 1_000);

async function send(specs: LogSpec[], kind: ExporterKind = 'grpc'): Promise<void> {
  const exporter = createExporter(kind, hub.ports, { gzip: kind === 'grpc' });
  try {
    const result = await exportLogs(exporter, await buildLogRecords(specs));
    expect(result.code, String(result.error)).toBe(ExportResultCode.SUCCESS);
  } finally {
    await exporter.shutdown();
  }
}

/** One application on the sending cluster, pulling `gitops/<env>/<app>`. */
function inCluster(name = randomName('app')): AppShape {
  return { name, destination: { name: 'in-cluster' }, sources: [{ repoURL: 'https://github.com/contoso/gitops.git', targetRevision: 'prod', path: `./apps/${name}/` }] };
}

const endpointOf = (shape: AppShape): string => `https://github.com/contoso/gitops/prod/apps/${shape.name}`;

const currentState = (host: string) => hostCurrentState((text, values) => testDb.query(text, values), host);

const history = (host: string) =>
  testDb.query<{ commit: string; status: string }>(
    `SELECT x.gitops_commit_id AS commit, x.status FROM deployment_state_history x JOIN reconciler r ON r.id = x.reconciler_id
       JOIN host h ON h.id = r.host_id WHERE h.name = $1 ORDER BY x.observed_at, x.id`,
    [host],
  );

const gate = async (endpoint: string, commit: string) =>
  (await apiGet(hub, `/deployment-state?${new URLSearchParams({ manifestsEndpoint: endpoint, commit }).toString()}`)).body;

describe('Argo CD Applications from the k8sobjects receiver', () => {
  it.each(EXPORTER_KINDS)('a synced and healthy in-cluster application is a success on the sending cluster (%s)', async (kind) => {
    const cluster = randomName('aks');
    const shape = inCluster();
    const commit = randomCommit();
    await send([applicationRecord(cluster, applicationObject(shape, moments.synced([commit], at(1))), 'ADDED', at(1))], kind);
    expect(await currentState(cluster)).toEqual([
      { reconciler: `argocd/${shape.name}`, type: 'argocd', endpoint: endpointOf(shape), commit, status: 'success', message: 'successfully synced (all tasks run)' },
    ]);
    const { body } = await apiGet(hub, `/hosts/${cluster}/state`);
    expect(body.reconcilers).toEqual([expect.objectContaining({ type: 'argocd', argocd: { sync: 'Synced', health: 'Healthy', operation: 'Succeeded' } })]);
    const hosts = await apiGet(hub, `/hosts?q=${cluster}`);
    expect(hosts.body.items).toEqual([expect.objectContaining({ name: cluster, reconcilerTypes: ['argocd'] })]);
  });

  it('follows a revision moving on a merge: compared, syncing, synced — each a transition the rollout gate sees', async () => {
    const cluster = randomName('aks');
    const shape = inCluster();
    const [before, merged] = [randomCommit(), randomCommit()];
    const record = (moment: Parameters<typeof applicationObject>[1], step: number) => applicationRecord(cluster, applicationObject(shape, moment), 'MODIFIED', at(step));
    await send([record(moments.synced([before], at(2)), 2)]);
    await send([record(moments.outOfSync([merged], [before], at(3)), 3)]);
    expect(await gate(endpointOf(shape), merged)).toMatchObject({ total: 1, inProgress: 1, subscribers: [{ statusMessage: 'OutOfSync, Healthy' }] });
    await send([record(moments.syncing([merged], at(4)), 4)]);
    expect(await gate(endpointOf(shape), merged)).toMatchObject({ total: 1, inProgress: 1, subscribers: [{ statusMessage: 'waiting for healthy state of apps/Deployment/api' }] });
    const argocd = async () => (await apiGet(hub, `/hosts/${cluster}/state`)).body.reconcilers[0].argocd;
    expect(await argocd()).toEqual({ sync: 'Synced', health: 'Progressing', operation: 'Running' });
    await send([record(moments.synced([merged], at(5)), 5)]);
    expect(await argocd()).toEqual({ sync: 'Synced', health: 'Healthy', operation: 'Succeeded' });
    expect(await gate(endpointOf(shape), merged)).toMatchObject({ total: 1, succeeded: 1, settled: true, subscribers: [{ host: cluster, reconciler: `argocd/${shape.name}`, reconcilerType: 'argocd' }] });
    expect(await history(cluster)).toEqual([
      { commit: before, status: 'success' },
      { commit: merged, status: 'in_progress' },
      { commit: merged, status: 'in_progress' },
      { commit: merged, status: 'success' },
    ]);
  });

  it('a sync that failed is a failure of the commit it tried, with the operation’s message; Degraded after a sync too', async () => {
    const cluster = randomName('aks');
    const [failing, degraded] = [inCluster(), inCluster()];
    const [first, second] = [randomCommit(), randomCommit()];
    const message = 'one or more objects failed to apply, reason: Deployment.apps "api" is invalid: spec.selector: field is immutable (retried 5 times).';
    await send([
      applicationRecord(cluster, applicationObject(failing, moments.failed([first], at(6), message)), 'MODIFIED', at(6)),
      applicationRecord(cluster, applicationObject(degraded, { ...moments.synced([second], at(6), 'Degraded'), healthMessage: 'Caused by apps/Deployment:api/api' }), 'MODIFIED', at(6)),
    ]);
    expect((await currentState(cluster)).map((row) => [row.reconciler, row.commit, row.status, row.message])).toEqual(
      [
        [`argocd/${failing.name}`, first, 'failure', message],
        [`argocd/${degraded.name}`, second, 'failure', 'Caused by apps/Deployment:api/api'],
      ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    );
    const { body } = await apiGet(hub, `/hosts/${cluster}/state`);
    expect(body.reconcilers.map((reconciler: any) => reconciler.argocd.health).sort()).toEqual(['Degraded', 'Healthy']);
  });

  it('a multi-source application is one reconciler per source, a values-only source included', async () => {
    const cluster = randomName('aks');
    const shape: AppShape = {
      name: randomName('payments'),
      destination: { server: 'https://kubernetes.default.svc' },
      sources: [
        { repoURL: 'https://github.com/contoso/charts', targetRevision: 'main', path: 'charts/payments' },
        { repoURL: 'https://github.com/contoso/values', targetRevision: 'prod', ref: 'values' },
      ],
    };
    const revisions = [randomCommit(), randomCommit()];
    await send([applicationRecord(cluster, applicationObject(shape, moments.synced(revisions, at(7))), 'ADDED', at(7))], 'http-json');
    expect((await currentState(cluster)).map((row) => [row.reconciler, row.endpoint, row.commit, row.status])).toEqual([
      [`argocd/${shape.name}#0`, 'https://github.com/contoso/charts/main/charts/payments', revisions[0], 'success'],
      [`argocd/${shape.name}#1`, 'https://github.com/contoso/values/prod', revisions[1], 'success'],
    ]);
  });

  it('takes a refresh that only moves reconciledAt as a sign of life, not a transition', async () => {
    const cluster = randomName('aks');
    const shape = inCluster();
    const commit = randomCommit();
    for (const step of [8, 26, 44]) await send([applicationRecord(cluster, applicationObject(shape, moments.synced([commit], at(step))), 'MODIFIED', at(step))], 'http-protobuf');
    expect(await history(cluster)).toEqual([{ commit, status: 'success' }]);
    const [row] = await testDb.query<{ first: Date; last: Date }>(
      `SELECT s.observed_at AS first, s.last_observed_at AS last FROM deployment_state s JOIN host h ON h.id = s.host_id WHERE h.name = $1`,
      [cluster],
    );
    expect(row).toEqual({ first: at(8), last: at(44) });
  });

  it('takes a deleted application out of the current state and keeps its history', async () => {
    const cluster = randomName('aks');
    const [gone, kept] = [inCluster(), inCluster()];
    const commit = randomCommit();
    await send([gone, kept].map((shape) => applicationRecord(cluster, applicationObject(shape, moments.synced([commit], at(9))), 'ADDED', at(9))));
    await send([applicationRecord(cluster, applicationObject(gone, moments.synced([commit], at(10))), 'DELETED', at(10))]);
    expect((await currentState(cluster)).map((row) => row.reconciler)).toEqual([`argocd/${kept.name}`]);
    expect(await history(cluster)).toHaveLength(2);
  });

  it('puts a remote destination on its own host: by name, even one Argo CD does not know, or by the server’s host name', async () => {
    const cluster = randomName('mgmt');
    const [known, unknown] = [randomName('aks'), randomName('aks')];
    const byName: AppShape = { ...inCluster(), destination: { name: known } };
    const byServer: AppShape = { ...inCluster(), destination: { server: `https://${known}.hcp.westeurope.azmk8s.io:443` } };
    const lost: AppShape = { ...inCluster(), destination: { name: unknown } };
    const commit = randomCommit();
    const invalid = {
      ...moments.synced([commit], at(11)),
      sync: { status: 'Unknown' as const, revisions: [commit] },
      health: 'Unknown' as const,
      conditions: [{ type: 'InvalidSpecError', message: `there are no clusters with this name: ${unknown}` }],
    };
    await send([
      applicationRecord(cluster, applicationObject(byName, moments.synced([commit], at(11))), 'ADDED', at(11)),
      applicationRecord(cluster, applicationObject(byServer, moments.synced([commit], at(11))), 'ADDED', at(11)),
      applicationRecord(cluster, applicationObject(lost, invalid), 'ADDED', at(11)),
    ]);
    expect(await currentState(cluster)).toEqual([]);
    expect((await currentState(known)).map((row) => row.reconciler)).toEqual([`argocd/${byName.name}`]);
    expect((await currentState(`${known}.hcp.westeurope.azmk8s.io`)).map((row) => row.reconciler)).toEqual([`argocd/${byServer.name}`]);
    expect(await currentState(unknown)).toEqual([
      expect.objectContaining({ reconciler: `argocd/${lost.name}`, commit, status: 'in_progress', message: `there are no clusters with this name: ${unknown}` }),
    ]);
  });

  it('takes the receiver’s record of the shared fixture (observed time only) as it is', async () => {
    const fixture = await readFile(new URL('../fixtures/argocd/k8sobjects-application-record.json', import.meta.url), 'utf8');
    const response = await httpExport(hub.ports.otlpHttp, fixture, { 'content-type': 'application/json' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({});
    expect(await currentState('aks-retail-prod-01')).toEqual([
      {
        reconciler: 'argocd/checkout-prod',
        type: 'argocd',
        endpoint: 'https://github.com/contoso/retail-gitops/main/envs/prod/checkout',
        commit: '6ee9b747ec30a41fe214193938d7c3c4c2e8201e',
        status: 'success',
        message: 'successfully synced (all tasks run)',
      },
    ]);
  });
});

describe('the other shape, and what is not stored', () => {
  /** A record the SDK would not send: raw OTLP/JSON. */
  async function rawExport(records: LogSpec[]): Promise<any> {
    const { JsonLogsSerializer } = await import('@opentelemetry/otlp-transformer');
    const response = await httpExport(hub.ports.otlpHttp, Buffer.from(JsonLogsSerializer.serializeRequest(await buildLogRecords(records))!), {
      'content-type': 'application/json',
    });
    expect(response.status).toBe(200);
    return response.json();
  }

  it('takes the object as the body with the event type as an attribute', async () => {
    const cluster = randomName('aks');
    const shape = inCluster();
    const object = applicationObject(shape, moments.synced([randomCommit()], at(12)));
    const bare = (type: string, step: number): LogSpec => ({ ...applicationRecord(cluster, object, 'ADDED', at(step)), attributes: { 'k8s.resource.name': 'applications', 'event.type': type }, body: object });
    expect(await rawExport([bare('ADDED', 12)])).toEqual({});
    expect((await currentState(cluster)).map((row) => row.reconciler)).toEqual([`argocd/${shape.name}`]);
    expect(await rawExport([bare('DELETED', 13)])).toEqual({});
    expect(await currentState(cluster)).toEqual([]);
  });

  it('ignores an application Argo CD has not compared yet, rejects one without k8s.cluster.name naming it, and stores the rest', async () => {
    const cluster = randomName('aks');
    const [fresh, orphan, stored] = [inCluster(), inCluster(), inCluster()];
    const { status: _, ...uncompared } = applicationObject(fresh, moments.synced([randomCommit()], at(14)));
    const withoutCluster = applicationRecord(cluster, applicationObject(orphan, moments.synced([randomCommit()], at(14))), 'ADDED', at(14));
    const answer = await rawExport([
      applicationRecord(cluster, uncompared, 'ADDED', at(14)),
      { ...withoutCluster, resource: { 'k8s.namespace.name': 'argocd' } },
      applicationRecord(cluster, applicationObject(stored, moments.synced([randomCommit()], at(14))), 'ADDED', at(14)),
    ]);
    expect(Number(answer.partialSuccess.rejectedLogRecords)).toBe(1);
    expect(answer.partialSuccess.errorMessage).toContain('k8sobjects record (Argo CD Application): resource attribute k8s.cluster.name is missing');
    expect((await currentState(cluster)).map((row) => row.reconciler)).toEqual([`argocd/${stored.name}`]);
  });
});
