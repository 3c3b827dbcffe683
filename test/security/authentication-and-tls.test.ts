// Bearer tokens and TLS as a production hub runs them: the API and both OTLP receivers over TLS
// from certificate files, one set of tokens for ingest and another for the API, a renewed
// certificate served without a restart, and bad files refused at start naming the setting.
import { X509Certificate } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRollout } from '../../src/cli/rollout-command.ts';
import { ConfigError } from '../../src/config/config.ts';
import { resolveHubConfig } from '../../src/settings.ts';
import type { RunningHub } from '../../src/hub.ts';
import { testTls } from '../support/global-tls.ts';
import { stateLog } from '../support/kalypso-logs.ts';
import { buildLogRecords, createExporter, EXPORTER_KINDS, ExportResultCode, exportLogs } from '../support/otlp-client.ts';
import { protobufRequest } from '../support/raw-otlp.ts';
import { minute } from '../support/records.ts';
import { randomCommit } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';
import { waitFor } from '../support/wait-for.ts';

let testDb: TestDatabase;
let hub: RunningHub;
let directory: string;
let certFile: string;
let keyFile: string;
let suiteCa: Buffer;
let api: string;

const API_TOKENS = ['api-token-current', 'api-token-next'];
const INGEST_TOKEN = 'ingest-token-1';

beforeAll(async () => {
  testDb = await createTestDatabase();
  // The hub starts with the suite's certificate (trusted by this process through
  // NODE_EXTRA_CA_CERTS), copied, because the rotation test overwrites the files.
  const suite = await testTls();
  directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-tls-'));
  certFile = path.join(directory, 'tls.crt');
  keyFile = path.join(directory, 'tls.key');
  await copyFile(suite.certFile, certFile);
  await copyFile(suite.keyFile, keyFile);
  suiteCa = await readFile(suite.certFile);
  hub = await startTestHub(
    testDb.url,
    ['--tls-cert-file', certFile, '--tls-key-file', keyFile, '--api-token', API_TOKENS.join(','), '--ingest-token', INGEST_TOKEN],
    { tlsRefreshMs: 100 },
  );
  api = `https://127.0.0.1:${hub.ports.http}`;
});

afterAll(async () => {
  await hub.stop();
  await testDb.drop();
  await rm(directory, { recursive: true, force: true });
});

/** An HTTPS GET trusting exactly `ca`; answers the status and the certificate the server showed. */
function httpsGet(url: string, ca: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, headers, agent: false }, (response) => {
      const fingerprint = (response.socket as TLSSocket).getPeerCertificate().fingerprint256;
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, fingerprint }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('API bearer token', () => {
  it('refuses /api/v1 without a token or with a wrong one, with 401, the error shape and WWW-Authenticate', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: `Bearer ${INGEST_TOKEN}` }, { authorization: API_TOKENS[0]! }]) {
      const response = await fetch(`${api}/api/v1/environments`, { headers });
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="kalypso-hub"');
      expect(await response.json()).toEqual({ error: { code: 'unauthorized', message: expect.stringContaining('bearer token') } });
    }
  });

  it('accepts every configured token (rotation), and keeps health, metrics and the OpenAPI document open', async () => {
    for (const token of API_TOKENS) {
      const response = await fetch(`${api}/api/v1/environments`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
    }
    for (const open of ['/healthz', '/readyz', '/metrics', '/api/v1/openapi.json', '/']) {
      expect((await fetch(`${api}${open}`)).status, open).toBe(200);
    }
  });

  it('lets the rollout CLI in with --token and refuses it without (exit 3: could not ask)', async () => {
    const args = ['--url', api, '--endpoint', 'https://github.com/contoso/gitops/main/prod', '--commit', randomCommit()];
    expect(await runRollout([...args, '--token', API_TOKENS[1]!], {})).toBe(2); // asked: no subscribers yet
    expect(await runRollout(args, {})).toBe(3);
    expect(await runRollout(args, { KALYPSO_API_TOKEN: API_TOKENS[0]! })).toBe(2);
  });
});

describe('OTLP over TLS with the ingest token', () => {
  it.each(EXPORTER_KINDS)('stores what the %s exporter sends over TLS with the token', async (kind) => {
    const exporter = createExporter(kind, hub.ports, { ca: suiteCa, token: INGEST_TOKEN });
    const result = await exportLogs(exporter, await buildLogRecords([stateLog({ host: `tls-${kind}`, commit: 'c1', at: minute(1) })]));
    await exporter.shutdown();
    expect(result.error?.message).toBeUndefined();
    expect(result.code).toBe(ExportResultCode.SUCCESS);
    expect(await testDb.query('SELECT name FROM host WHERE name = $1', [`tls-${kind}`])).toHaveLength(1);
  });

  it('refuses the API token for ingest, and plain text on every port', async () => {
    const exporter = createExporter('http-protobuf', hub.ports, { ca: suiteCa, token: API_TOKENS[0]! });
    const result = await exportLogs(exporter, await buildLogRecords([stateLog({ host: 'tls-api-token', commit: 'c1', at: minute(1) })]));
    await exporter.shutdown();
    expect(result.code).toBe(ExportResultCode.FAILED);
    for (const port of [hub.ports.http, hub.ports.otlpHttp]) {
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    }
    const plain = new grpc.Client(`127.0.0.1:${hub.ports.otlpGrpc}`, grpc.credentials.createInsecure());
    const error = await new Promise<grpc.ServiceError | null>((resolve) =>
      plain.makeUnaryRequest(
        '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
        (value: Buffer) => value,
        (value: Buffer) => value,
        protobufRequest([]),
        new grpc.Metadata(),
        { deadline: Date.now() + 3_000 },
        (failure) => resolve(failure),
      ),
    );
    plain.close();
    expect(error?.code).toBeOneOf([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]);
    expect(await testDb.query("SELECT name FROM host WHERE name = 'tls-api-token'")).toEqual([]);
  });
});

describe('security headers over TLS', () => {
  it('tells browsers to keep to HTTPS (HSTS) on the UI, the API and OTLP/HTTP', async () => {
    for (const url of [`${api}/`, `${api}/api/v1/environments`, `https://127.0.0.1:${hub.ports.otlpHttp}/v1/logs`]) {
      const response = await fetch(url, { method: url.endsWith('/v1/logs') ? 'POST' : 'GET' });
      await response.arrayBuffer();
      expect(response.headers.get('strict-transport-security'), url).toBe('max-age=31536000');
      expect(response.headers.get('x-content-type-options'), url).toBe('nosniff');
    }
  });
});

describe('certificate renewal', () => {
  it('serves a renewed certificate on new connections of every port, without a restart', async () => {
    const before = await httpsGet(`${api}/healthz`, suiteCa);
    expect(before.fingerprint).toBe(new X509Certificate(suiteCa).fingerprint256);

    const renewed = await generate([{ name: 'commonName', value: 'kalypso-hub renewed' }], {
      notBeforeDate: new Date(Date.now() - 3_600_000),
      notAfterDate: new Date(Date.now() + 86_400_000),
      keySize: 2048,
      algorithm: 'sha256',
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
    });
    const renewedCa = Buffer.from(renewed.cert);
    const renewedFingerprint = new X509Certificate(renewedCa).fingerprint256;
    // cert-manager writes the certificate and the key one after the other: for a moment they do
    // not match, and the hub must keep serving the old pair.
    await writeFile(certFile, renewed.cert);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await httpsGet(`${api}/healthz`, suiteCa)).fingerprint).toBe(before.fingerprint);
    await writeFile(keyFile, renewed.private);

    for (const port of [hub.ports.http, hub.ports.otlpHttp]) {
      await waitFor(
        async () => (await httpsGet(`https://127.0.0.1:${port}/healthz`, renewedCa).catch(() => undefined))?.fingerprint === renewedFingerprint,
        `port ${port} to serve the renewed certificate`,
      );
    }
    const grpcExporter = createExporter('grpc', hub.ports, { ca: renewedCa, token: INGEST_TOKEN });
    const result = await exportLogs(grpcExporter, await buildLogRecords([stateLog({ host: 'tls-renewed', commit: 'c1', at: minute(2) })]));
    await grpcExporter.shutdown();
    expect(result.code).toBe(ExportResultCode.SUCCESS);
  });
});

describe('TLS settings', () => {
  it('needs both files', () => {
    expect(() => resolveHubConfig(['--tls-cert-file', '/etc/tls.crt'], {})).toThrow(ConfigError);
    expect(() => resolveHubConfig([], { KALYPSO_TLS_KEY_FILE: '/etc/tls.key' })).toThrow(/--tls-cert-file and --tls-key-file/);
  });

  it('stops start-up naming the file that cannot be read, or a key that does not match the certificate', async () => {
    const other = await generate([{ name: 'commonName', value: 'other' }], { keySize: 2048, algorithm: 'sha256' });
    const otherKey = path.join(directory, 'other.key');
    await writeFile(otherKey, other.private);
    await expect(startTestHub(testDb.url, ['--tls-cert-file', path.join(directory, 'missing.crt'), '--tls-key-file', keyFile])).rejects.toThrow(
      /--tls-cert-file .*missing\.crt: ENOENT/,
    );
    await expect(startTestHub(testDb.url, ['--tls-cert-file', certFile, '--tls-key-file', otherKey])).rejects.toThrow(/--tls-key-file .*other\.key/);
  });
});
