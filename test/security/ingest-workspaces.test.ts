// An ingest credential restricted to workspaces — a service token, or an OIDC identity whose ingest
// rule names workspaces (a team's CD pipeline sending its descriptors) — may send the reports of
// those workspaces only. A descriptor of another workspace is refused through OTLP partial success
// naming its workspace field; a record that names no workspace (a reconciler's state) is refused
// too; the rest of the request is stored. An unrestricted ingest credential (an edge agent's) sends
// anything. Over OTLP/HTTP (JSON) and OTLP/gRPC, through the real receivers and a real OIDC provider.
import * as grpc from '@grpc/grpc-js';
import { JsonLogsSerializer } from '@opentelemetry/otlp-transformer';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { otlpTypes } from '../../src/sources/otlp/otlp-proto.ts';
import { writeAuthConfig } from '../support/auth-config.ts';
import { startTestIssuer, type TestIssuer } from '../support/oidc-issuer.ts';
import { buildLogRecords, type LogSpec } from '../support/otlp-client.ts';
import { grpcExport, httpExport, protobufRequest } from '../support/raw-otlp.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

let testDb: TestDatabase;
let hub: RunningHub;
let issuer: TestIssuer;
let dir: string;

const A = randomName('ws-a');
const B = randomName('ws-b');
const ENV = randomName('env');
const TOKEN_A = 'ingest-for-a-0123456789';

beforeAll(async () => {
  testDb = await createTestDatabase();
  dir = await mkdtemp(path.join(os.tmpdir(), 'kalypso-ingest-ws-'));
  issuer = await startTestIssuer({ audience: 'kalypso-hub' });
  await writeFile(path.join(dir, 'tokens.yaml'), `tokens:\n  - { name: ingest-a, token: ${TOKEN_A}, roles: [ingest], workspaces: [${A}] }\n`);
  const authConfig = await writeAuthConfig(dir, {
    issuer: issuer.issuer,
    audience: 'kalypso-hub',
    rules: [
      // A's pipelines send A's descriptors, and may read B's too: what they send is the ingest rule's.
      { when: { repository: 'contoso/a-*' }, roles: ['ingest'], workspaces: [A] },
      { when: { repository: 'contoso/a-*' }, roles: ['viewer'], workspaces: [A, B] },
      // The edge agents send everything.
      { when: { repository: 'contoso/agents' }, roles: ['ingest'] },
    ],
  });
  hub = await startTestHub(testDb.url, ['--service-tokens', path.join(dir, 'tokens.yaml'), '--auth-config', authConfig]);
}, 60_000);

afterAll(async () => {
  await hub?.stop();
  await issuer?.close();
  await testDb?.drop();
  await rm(dir, { recursive: true, force: true });
});

function descriptor(workspace: string, workload: string): LogSpec {
  return {
    resource: { 'service.name': 'cd-pipeline' },
    eventName: 'kalypso.deployment.descriptor',
    attributes: { 'vcs.ref.head.revision': randomCommit() },
    body: {
      workload: { name: workload, source: { repo: 'https://github.com/contoso/src', branch: 'main', path: '.' }, application: { name: 'shop', workspace: { name: workspace } } },
      deploymentTarget: { name: 'main', environment: ENV, manifests: { repo: 'https://github.com/contoso/gitops', branch: ENV, path: workload } },
      workloadVersion: { version: '1.0.0', build: 'b-1', commit: randomCommit(), buildTime: new Date(Date.now() - 60_000).toISOString() },
    },
    time: new Date(),
  };
}

function state(workload: string): LogSpec {
  return {
    resource: { 'k8s.cluster.name': randomName('aks') },
    eventName: 'kalypso.deployment.state',
    attributes: {
      'kalypso.reconciler.name': `flux-system/${workload}`,
      'kalypso.manifests.endpoint': `https://github.com/contoso/gitops/${ENV}/${workload}`,
      'vcs.ref.head.revision': randomCommit(),
      'kalypso.deployment.status': 'success',
    },
    body: 'applied',
    time: new Date(),
  };
}

async function storedWorkloads(): Promise<string[]> {
  const rows = await sql<{ workload: string }>`SELECT workload FROM deployment_target_named WHERE environment = ${ENV} ORDER BY workload`.execute(hub.database.db);
  return rows.rows.map((row) => row.workload);
}

async function storedReconcilers(): Promise<string[]> {
  const rows = await sql<{ name: string }>`SELECT r.name FROM reconciler r ORDER BY r.name`.execute(hub.database.db);
  return rows.rows.map((row) => row.name);
}

type Partial = { partialSuccess?: { rejectedLogRecords?: number; errorMessage?: string } };

describe('an ingest credential restricted to workspaces', () => {
  it('stores a service token’s descriptors of its workspace and refuses, per record, another’s and a state (OTLP/HTTP JSON)', async () => {
    const [own, others, agent] = [randomName('wl-a'), randomName('wl-b'), randomName('wl-x')];
    const records = await buildLogRecords([descriptor(A, own), descriptor(B, others), state(agent)]);
    const response = await httpExport(hub.ports.otlpHttp, Buffer.from(JsonLogsSerializer.serializeRequest(records)!), {
      'content-type': 'application/json',
      authorization: `Bearer ${TOKEN_A}`,
    });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as Partial;
    expect(Number(answer.partialSuccess?.rejectedLogRecords)).toBe(2);
    const message = answer.partialSuccess?.errorMessage ?? '';
    expect(message).toContain(
      `kalypso.deployment.descriptor: body.workload.application.workspace.name: ${JSON.stringify(B)} is not among the workspaces this credential may send (${A})`,
    );
    expect(message).toContain('a reconciler’s state names no workspace');
    expect(await storedWorkloads()).toContain(own);
    expect(await storedWorkloads()).not.toContain(others);
    expect(await storedReconcilers()).not.toContain(`flux-system/${agent}`);
  });

  it('restricts an OIDC identity by its ingest rule’s workspaces, not its viewer rule’s (OTLP/gRPC)', async () => {
    const [own, others] = [randomName('wl-a'), randomName('wl-b')];
    const token = await issuer.sign({ sub: 'repo:contoso/a-payments', repository: 'contoso/a-payments' });
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${token}`);
    const { error, response } = await grpcExport(hub.ports.otlpGrpc, protobufRequest(await buildLogRecords([descriptor(B, others), descriptor(A, own)])), metadata);
    expect(error).toBeNull();
    const decoded = otlpTypes.ExportLogsServiceResponse.toObject(otlpTypes.ExportLogsServiceResponse.decode(response!), { longs: Number }) as Partial;
    expect(decoded.partialSuccess?.rejectedLogRecords).toBe(1);
    expect(decoded.partialSuccess?.errorMessage).toContain(`kalypso.deployment.descriptor: body.workload.application.workspace.name: ${JSON.stringify(B)}`);
    expect(await storedWorkloads()).toContain(own);
    expect(await storedWorkloads()).not.toContain(others);
  });

  it('lets an ingest rule that names no workspace send every workspace’s reports and real state', async () => {
    const [others, agent] = [randomName('wl-b'), randomName('wl-x')];
    const token = await issuer.sign({ sub: 'repo:contoso/agents', repository: 'contoso/agents' });
    const records = await buildLogRecords([descriptor(B, others), state(agent)]);
    const response = await httpExport(hub.ports.otlpHttp, Buffer.from(JsonLogsSerializer.serializeRequest(records)!), {
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
    });
    expect(response.status).toBe(200);
    expect(Number(((await response.json()) as Partial).partialSuccess?.rejectedLogRecords ?? 0)).toBe(0);
    expect(await storedWorkloads()).toContain(others);
    expect(await storedReconcilers()).toContain(`flux-system/${agent}`);
  });
});
