// A stock OpenTelemetry Collector as the edge agent: Flux Kustomization and GitRepository objects
// from its k8sobjects receiver, sent through the SDK exporter, become reconciler states.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { gitRepository, kustomization } from '../support/flux-objects.ts';
import { buildLogRecords, createExporter, ExportResultCode, exportLogs, type LogSpec } from '../support/otlp-client.ts';
import { httpExport } from '../support/raw-otlp.ts';
import { minute } from '../support/records.ts';
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

const REPO = 'https://github.com/contoso/retail-gitops.git';
const sha = (digit: string): string => digit.repeat(40);

async function send(...specs: LogSpec[]): Promise<void> {
  const result = await exportLogs(createExporter('grpc', hub.ports, { gzip: true }), await buildLogRecords(specs));
  expect(result.code, String(result.error)).toBe(ExportResultCode.SUCCESS);
}

const currentState = (cluster: string) => hostCurrentState((text, values) => testDb.query(text, values), cluster);

const historyCount = async (cluster: string): Promise<number> =>
  (
    await testDb.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM deployment_state_history x JOIN reconciler r ON r.id = x.reconciler_id
         JOIN host h ON h.id = r.host_id WHERE h.name = $1`,
      [cluster],
    )
  )[0]!.n;

const succeeded = (commit: string) => ({ status: 'True' as const, reason: 'ReconciliationSucceeded', message: `Applied revision: main@sha1:${commit}` });

describe('k8sobjects records (CONTRACT 3.3)', () => {
  it('derives a state once a Kustomization that arrived first meets its GitRepository', async () => {
    await send(kustomization({ cluster: 'edge-1', name: 'pos-app', path: './stores/berlin', applied: `main@sha1:${sha('a')}`, ready: succeeded(sha('a')), at: minute(1) }));
    expect(await currentState('edge-1')).toEqual([]);

    await send(gitRepository({ cluster: 'edge-1', url: REPO, branch: 'main', at: minute(2) }));
    expect(await currentState('edge-1')).toEqual([
      {
        reconciler: 'flux-system/pos-app',
        type: 'flux',
        endpoint: 'https://github.com/contoso/retail-gitops/main/stores/berlin',
        commit: sha('a'),
        status: 'success',
        message: `Applied revision: main@sha1:${sha('a')}`,
      },
    ]);
  });

  it('keeps clusters apart: the same object names elsewhere do not mix', async () => {
    await send(
      gitRepository({ cluster: 'edge-2', url: 'https://github.com/contoso/other-gitops', branch: 'prod', at: minute(1) }),
      kustomization({ cluster: 'edge-2', name: 'pos-app', path: 'stores/paris', applied: `prod@sha1:${sha('b')}`, ready: succeeded(sha('b')), at: minute(1) }),
    );
    expect((await currentState('edge-2')).map((row) => [row.endpoint, row.commit])).toEqual([
      ['https://github.com/contoso/other-gitops/prod/stores/paris', sha('b')],
    ]);
    expect((await currentState('edge-1'))[0]?.commit).toBe(sha('a'));
  });

  it('reports a failing reconciliation against the revision it attempted', async () => {
    await send(
      gitRepository({ cluster: 'edge-3', url: REPO, branch: 'main', at: minute(1) }),
      kustomization({
        cluster: 'edge-3',
        name: 'pos-app',
        path: './stores/rome',
        applied: `main@sha1:${sha('a')}`,
        attempted: `main@sha1:${sha('c')}`,
        ready: { status: 'False', reason: 'HealthCheckFailed', message: 'timeout waiting for: [Deployment/pos/pos-api status: InProgress]' },
        at: minute(2),
      }),
      kustomization({
        cluster: 'edge-3',
        name: 'pos-db',
        path: './stores/rome-db',
        attempted: `main@sha1:${sha('c')}`,
        ready: { status: 'Unknown', reason: 'Progressing', message: 'Reconciliation in progress' },
        at: minute(2),
      }),
    );
    expect((await currentState('edge-3')).map((row) => [row.reconciler, row.commit, row.status, row.message])).toEqual([
      ['flux-system/pos-app', sha('c'), 'failure', 'timeout waiting for: [Deployment/pos/pos-api status: InProgress]'],
      ['flux-system/pos-db', sha('c'), 'in_progress', 'Reconciliation in progress'],
    ]);
  });

  it('shows a suspended Kustomization as in progress, saying so', async () => {
    await send(
      gitRepository({ cluster: 'edge-4', url: REPO, branch: 'main', at: minute(1) }),
      kustomization({ cluster: 'edge-4', name: 'pos-app', path: 'stores/oslo', applied: `main@sha1:${sha('a')}`, ready: succeeded(sha('a')), suspend: true, at: minute(1) }),
    );
    const [row] = await currentState('edge-4');
    expect(row?.status).toBe('in_progress');
    expect(row?.message).toMatch(/^suspended: Applied revision/);
  });

  it('moves the endpoint when the GitRepository follows another branch', async () => {
    await send(
      gitRepository({ cluster: 'edge-5', url: REPO, branch: 'main', at: minute(1) }),
      kustomization({ cluster: 'edge-5', name: 'pos-app', path: 'stores/madrid', applied: `main@sha1:${sha('a')}`, ready: succeeded(sha('a')), at: minute(1) }),
    );
    await send(gitRepository({ cluster: 'edge-5', url: REPO, branch: 'release', at: minute(3) }));
    expect((await currentState('edge-5')).map((row) => row.endpoint)).toEqual(['https://github.com/contoso/retail-gitops/release/stores/madrid']);
  });

  it('takes a DELETED Kustomization out of the current state, keeps its history, and ignores a late older event', async () => {
    await send(
      gitRepository({ cluster: 'edge-6', url: REPO, branch: 'main', at: minute(1) }),
      kustomization({ cluster: 'edge-6', name: 'pos-app', path: 'stores/kyiv', applied: `main@sha1:${sha('a')}`, ready: succeeded(sha('a')), at: minute(1) }),
      kustomization({ cluster: 'edge-6', name: 'pos-db', path: 'stores/kyiv-db', applied: `main@sha1:${sha('a')}`, ready: succeeded(sha('a')), at: minute(1) }),
    );
    expect(await currentState('edge-6')).toHaveLength(2);
    await send(kustomization({ cluster: 'edge-6', name: 'pos-app', path: 'stores/kyiv', type: 'DELETED', at: minute(5) }));
    expect((await currentState('edge-6')).map((row) => row.reconciler)).toEqual(['flux-system/pos-db']);
    expect(await historyCount('edge-6')).toBe(2);

    // An event from before the deletion, delivered late by a collector that was offline.
    await send(kustomization({ cluster: 'edge-6', name: 'pos-app', path: 'stores/kyiv', applied: `main@sha1:${sha('b')}`, ready: succeeded(sha('b')), at: minute(4) }));
    expect((await currentState('edge-6')).map((row) => row.reconciler)).toEqual(['flux-system/pos-db']);
  });

  it('takes pull-mode records (the bare object) as well', async () => {
    await send(
      gitRepository({ cluster: 'edge-7', url: REPO, branch: 'main', at: minute(1) }),
      kustomization({ cluster: 'edge-7', name: 'pos-app', path: 'stores/lima', applied: `main@sha1:${sha('d')}`, ready: succeeded(sha('d')), type: 'pull', at: minute(1) }),
    );
    expect((await currentState('edge-7')).map((row) => row.commit)).toEqual([sha('d')]);
  });

  it('rejects a record without k8s.cluster.name, naming it, and stores the rest of the request', async () => {
    const records = await buildLogRecords([
      kustomization({ cluster: undefined, name: 'pos-app', path: 'stores/x', applied: `main@sha1:${sha('a')}`, at: minute(1) }),
      gitRepository({ cluster: 'edge-8', url: REPO, branch: 'main', at: minute(1) }),
      kustomization({ cluster: 'edge-8', name: 'pos-app', path: 'stores/y', applied: `main@sha1:${sha('e')}`, ready: succeeded(sha('e')), at: minute(1) }),
    ]);
    const { JsonLogsSerializer } = await import('@opentelemetry/otlp-transformer');
    const response = await httpExport(hub.ports.otlpHttp, Buffer.from(JsonLogsSerializer.serializeRequest(records)!), {
      'content-type': 'application/json',
    });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { partialSuccess: { rejectedLogRecords: number | string; errorMessage: string } };
    expect(Number(answer.partialSuccess.rejectedLogRecords)).toBe(1);
    expect(answer.partialSuccess.errorMessage).toContain('k8s.cluster.name');
    expect((await currentState('edge-8')).map((row) => row.commit)).toEqual([sha('e')]);
  });

  it('ignores watch bookmarks and end-of-pull markers, which carry no object state', async () => {
    const marker = (type: string): LogSpec => ({
      resource: { 'k8s.cluster.name': 'edge-9' },
      attributes: { 'k8s.resource.name': 'kustomizations', 'event.domain': 'k8s' },
      body: { type, object: { kind: 'kustomizations' } },
      time: minute(1),
    });
    const records = await buildLogRecords([marker('PullEnd'), marker('BOOKMARK')]);
    const { JsonLogsSerializer } = await import('@opentelemetry/otlp-transformer');
    const response = await httpExport(hub.ports.otlpHttp, Buffer.from(JsonLogsSerializer.serializeRequest(records)!), {
      'content-type': 'application/json',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({});
    expect(await currentState('edge-9')).toEqual([]);
  });

  it('takes the receiver record of the shared fixture (observed time only) as it is', async () => {
    const fixture = await readFile(new URL('../fixtures/k8sobjects-kustomization-record.json', import.meta.url), 'utf8');
    const response = await httpExport(hub.ports.otlpHttp, fixture, { 'content-type': 'application/json' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({});
    await send(gitRepository({ cluster: 'store-berlin-01', name: 'retail-gitops', url: 'https://github.com/contoso/retail-gitops', branch: 'prod', at: new Date(Date.UTC(2025, 10, 20)) }));
    const [row] = await currentState('store-berlin-01');
    expect(row).toMatchObject({
      reconciler: 'flux-system/pos-app',
      endpoint: 'https://github.com/contoso/retail-gitops/prod/stores/berlin',
      commit: '0d5c1a7e9b3f4c2d8e6a1b0c9d8e7f6a5b4c3d2e',
      status: 'success',
    });
  });
});
