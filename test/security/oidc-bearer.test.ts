// OIDC bearer tokens at the API, the gate and OTLP, against a real OpenID Connect provider over
// HTTPS: the hub discovers the issuer, fetches its keys, and judges each token by signature,
// issuer, audience and lifetime (with the configured clock tolerance), then maps its claims to
// roles. Refusals name the claim that failed and count in /metrics by reason.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { writeAuthConfig } from '../support/auth-config.ts';
import { startTestIssuer, type TestIssuer } from '../support/oidc-issuer.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

let testDb: TestDatabase;
let hub: RunningHub;
let issuer: TestIssuer;
let other: TestIssuer;
let dir: string;

const AUDIENCE = 'kalypso-hub';

beforeAll(async () => {
  testDb = await createTestDatabase();
  dir = await mkdtemp(path.join(os.tmpdir(), 'kalypso-oidc-'));
  issuer = await startTestIssuer({
    audience: AUDIENCE,
    machines: { 'deploy-app-a': { secret: 'a-long-client-secret-0123456789', claims: { repository: 'contoso/app-a', ref: 'refs/heads/main' } } },
  });
  // A second provider, real but not trusted by the hub.
  other = await startTestIssuer({ audience: AUDIENCE });
  // The issuer with a trailing slash: the hub compares issuers without it.
  const config = await writeAuthConfig(dir, {
    issuer: `${issuer.issuer}/`,
    audience: AUDIENCE,
    rules: [
      { when: { repository: 'contoso/*', ref: 'refs/heads/main' }, roles: ['pipeline'], workspaces: ['ws-a'] },
      { when: { groups: 'kalypso-viewers' }, roles: ['viewer'], workspacesClaim: 'workspaces' },
      { when: { sub: 'collector-*' }, roles: ['ingest'] },
    ],
    clockTolerance: '5s',
  });
  hub = await startTestHub(testDb.url, ['--auth-config', config], { identityTuning: { oidc: { jwksCooldownMs: 0 }, failedAuth: { freeFailures: 1_000 } } });
}, 60_000);

afterAll(async () => {
  await hub?.stop();
  await issuer?.close();
  await other?.close();
  await testDb?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function ask(pathAndQuery: string, token: string | undefined): Promise<{ status: number; message: string }> {
  const response = await fetch(`http://127.0.0.1:${hub.ports.http}${pathAndQuery}`, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  const body = (await response.json()) as { error?: { message: string } };
  return { status: response.status, message: body.error?.message ?? '' };
}

const viewer = { sub: 'alice@contoso', groups: ['kalypso-viewers'], workspaces: ['ws-a'] };

describe('OIDC bearer tokens', () => {
  it('admits a token the provider minted (client credentials, CI-style claims) to the gate, not to the reports', async () => {
    const token = await issuer.clientCredentials('deploy-app-a');
    const gate = await ask('/api/v1/deployment-state?manifestsEndpoint=https://github.com/contoso/gitops/main/app-a&commit=0123456', token);
    expect(gate.status, gate.message).not.toBe(401);
    expect(gate.status, gate.message).not.toBe(403);
    const reports = await ask('/api/v1/environments', token);
    expect(reports.status).toBe(403);
    expect(reports.message).toMatch(/roles pipeline; read needs viewer or admin/);
  });

  it('admits a valid viewer token, and one just past exp within the clock tolerance', async () => {
    expect((await ask('/api/v1/environments', await issuer.sign(viewer))).status).toBe(200);
    const justExpired = await issuer.sign(viewer, { issuedAgoSeconds: 62, expiresInSeconds: 60 });
    expect((await ask('/api/v1/environments', justExpired)).status).toBe(200);
  });

  it('refuses an expired token, a wrong audience, an untrusted issuer and a forged signature with 401 naming why', async () => {
    const expired = await ask('/api/v1/environments', await issuer.sign(viewer, { issuedAgoSeconds: 600, expiresInSeconds: 300 }));
    expect(expired).toEqual({ status: 401, message: 'token expired (exp)' });
    const audience = await ask('/api/v1/environments', await issuer.sign({ ...viewer, aud: 'someone-else' }));
    expect(audience).toEqual({ status: 401, message: 'token refused: claim aud does not match' });
    const untrusted = await ask('/api/v1/environments', await other.sign(viewer));
    expect(untrusted.status).toBe(401);
    expect(untrusted.message).toBe(`issuer "${other.issuer}" is not trusted (--auth-config issuers)`);
    // Signed by the other provider's key while naming the trusted issuer: the keys do not match.
    const forged = await ask('/api/v1/environments', await issuer.sign(viewer, { key: other.key }));
    expect(forged).toEqual({ status: 401, message: `token not signed by a key of ${issuer.issuer}` });
  });

  it('refuses a good token that maps to no role with 403 (asking again will not help)', async () => {
    const nobody = await ask('/api/v1/environments', await issuer.sign({ sub: 'mallory', groups: ['other-team'] }));
    expect(nobody).toEqual({ status: 403, message: 'mallory has no role; read needs viewer or admin' });
    // A rule holds only when every condition does: the right repository from another branch is no pipeline.
    const branch = await ask('/api/v1/deployment-state?environment=dev&commit=0123456', await issuer.sign({ repository: 'contoso/app-a', ref: 'refs/heads/feature' }));
    expect(branch.status).toBe(403);
  });

  it('follows a key rotation: a token signed with the new key is admitted, the retired key no longer', async () => {
    const before = await issuer.sign(viewer);
    expect((await ask('/api/v1/environments', before)).status).toBe(200);
    const retired = issuer.key;
    await issuer.rotate();
    expect((await ask('/api/v1/environments', await issuer.sign(viewer))).status).toBe(200);
    const old = await ask('/api/v1/environments', await issuer.sign(viewer, { key: retired }));
    expect(old.status).toBe(401);
  });

  it('lets an identity with the ingest role export over OTLP/HTTP, and refuses a viewer with 403', async () => {
    const post = async (token: string): Promise<number> =>
      (
        await fetch(`http://127.0.0.1:${hub.ports.otlpHttp}/v1/logs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ resourceLogs: [] }),
        })
      ).status;
    expect(await post(await issuer.sign({ sub: 'collector-edge-7' }))).toBe(200);
    expect(await post(await issuer.sign(viewer))).toBe(403);
    expect(await post('not-a-token')).toBe(401);
  });

  it('judges OTLP/gRPC the same way: ingest role admitted, a viewer PERMISSION_DENIED, garbage UNAUTHENTICATED', async () => {
    const client = new grpc.Client(`127.0.0.1:${hub.ports.otlpGrpc}`, grpc.credentials.createInsecure());
    const exportWith = (token: string): Promise<grpc.ServiceError | null> =>
      new Promise((resolve) => {
        const metadata = new grpc.Metadata();
        metadata.set('authorization', `Bearer ${token}`);
        // An empty ExportLogsServiceRequest: nothing to store, only the door is judged.
        client.makeUnaryRequest('/opentelemetry.proto.collector.logs.v1.LogsService/Export', (value: Buffer) => value, (value: Buffer) => value, Buffer.alloc(0), metadata, (failure) =>
          resolve(failure),
        );
      });
    expect(await exportWith(await issuer.sign({ sub: 'collector-edge-8' }))).toBeNull();
    const viewerError = await exportWith(await issuer.sign(viewer));
    expect(viewerError?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(viewerError?.details).toBe('alice@contoso has roles viewer; ingest needs ingest or admin');
    expect((await exportWith('garbage'))?.code).toBe(grpc.status.UNAUTHENTICATED);
    client.close();
  });

  it('counts admissions by role and refusals by reason in /metrics, naming no subject', async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${hub.ports.http}/metrics`)).text();
    expect(metrics).toMatch(/kalypso_admitted_requests_total\{door="api",role="viewer",via="oidc"\} [1-9]/);
    expect(metrics).toMatch(/kalypso_admitted_requests_total\{door="ingest",role="ingest",via="oidc"\} 2/);
    for (const reason of ['expired', 'audience', 'untrusted_issuer', 'signature', 'forbidden']) {
      expect(metrics).toMatch(new RegExp(`kalypso_refused_requests_total\\{door="api",reason="${reason}"\\} [1-9]`));
    }
    expect(metrics).not.toContain('alice');
  });
});
