// The receivers' protocol behaviour (CONTRACT 3.4): content types, compression, limits,
// partial success encoding, authentication and metrics.
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { otlpTypes } from '../../src/sources/otlp/otlp-proto.ts';
import { buildLogRecords, createExporter, EXPORTER_KINDS, ExportResultCode, exportLogs } from '../support/otlp-client.ts';
import { stateLog } from '../support/kalypso-logs.ts';
import { grpcExport, httpExport, protobufRequest } from '../support/raw-otlp.ts';
import { minute } from '../support/records.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

const LIMIT = 1024 * 1024;
let testDb: TestDatabase;
let hub: RunningHub;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url, ['--max-request-size', '1MiB']);
});

afterAll(async () => {
  await hub.stop();
  await testDb.drop();
});

const mixedRecords = () =>
  buildLogRecords([
    stateLog({ host: 'proto-1', commit: 'c1', at: minute(1) }),
    { ...stateLog({ host: 'proto-1', commit: 'c1', at: minute(1) }), attributes: { 'kalypso.reconciler.name': 'r' } },
    { resource: { 'service.name': 'web' }, body: 'GET / 200' },
  ]);

describe('OTLP/HTTP', () => {
  it('answers a JSON request in JSON, with the partial success as the specification encodes it', async () => {
    const { JsonLogsSerializer } = await import('@opentelemetry/otlp-transformer');
    const body = Buffer.from(JsonLogsSerializer.serializeRequest(await mixedRecords())!);
    const response = await httpExport(hub.ports.otlpHttp, body, { 'content-type': 'application/json; charset=utf-8' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const answer = (await response.json()) as { partialSuccess: { rejectedLogRecords: string; errorMessage: string } };
    expect(answer.partialSuccess.rejectedLogRecords).toBe('1');
    expect(answer.partialSuccess.errorMessage).toContain(
      'resource_logs[0].scope_logs[0].log_records[1]: kalypso.deployment.state: kalypso.manifests.endpoint is missing',
    );
  });

  it('answers a protobuf request in protobuf; a full success carries no partial success', async () => {
    const response = await httpExport(hub.ports.otlpHttp, protobufRequest(await buildLogRecords([stateLog({ host: 'proto-2', commit: 'c1', at: minute(1) })])));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-protobuf');
    const decoded = otlpTypes.ExportLogsServiceResponse.toObject(
      otlpTypes.ExportLogsServiceResponse.decode(new Uint8Array(await response.arrayBuffer())),
    );
    expect(decoded).toEqual({});
  });

  it('accepts an empty request', async () => {
    const response = await httpExport(hub.ports.otlpHttp, '{}', { 'content-type': 'application/json' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('{}');
  });

  it('refuses other content types and encodings with 415', async () => {
    expect((await httpExport(hub.ports.otlpHttp, 'x', { 'content-type': 'text/plain' })).status).toBe(415);
    const zstd = await httpExport(hub.ports.otlpHttp, 'x', { 'content-type': 'application/x-protobuf', 'content-encoding': 'zstd' });
    expect(zstd.status).toBe(415);
    expect(await zstd.text()).toContain('use gzip or none');
  });

  it('refuses an undecodable payload with 400 (not retryable) and a Status body', async () => {
    const response = await httpExport(hub.ports.otlpHttp, Buffer.from([0x0a, 0xff, 0xff, 0x01]));
    expect(response.status).toBe(400);
    const status = otlpTypes.Status.decode(new Uint8Array(await response.arrayBuffer())) as unknown as { code: number; message: string };
    expect(status.code).toBe(3);
    expect(status.message).toContain('invalid OTLP protobuf payload');
  });

  it('refuses bodies over the limit with 413, before and after decompression (gzip bombs)', async () => {
    const big = Buffer.alloc(LIMIT + 1, 0x20);
    expect((await httpExport(hub.ports.otlpHttp, big)).status).toBe(413);
    const bomb = gzipSync(Buffer.alloc(LIMIT * 8, 0x20));
    expect(bomb.length).toBeLessThan(LIMIT);
    const response = await httpExport(hub.ports.otlpHttp, bomb, { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' });
    expect(response.status).toBe(413);
  });
});

describe('OTLP/gRPC', () => {
  it('returns the partial success in the response message', async () => {
    const { error, response } = await grpcExport(hub.ports.otlpGrpc, protobufRequest(await mixedRecords()));
    expect(error).toBeNull();
    const decoded = otlpTypes.ExportLogsServiceResponse.toObject(otlpTypes.ExportLogsServiceResponse.decode(response!), {
      longs: Number,
    }) as { partialSuccess: { rejectedLogRecords: number; errorMessage: string } };
    expect(decoded.partialSuccess.rejectedLogRecords).toBe(1);
    expect(decoded.partialSuccess.errorMessage).toContain('kalypso.manifests.endpoint is missing');
  });

  it('refuses an undecodable payload with INVALID_ARGUMENT', async () => {
    const { error } = await grpcExport(hub.ports.otlpGrpc, Buffer.from([0x0a, 0xff, 0xff, 0x01]));
    expect(error?.code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  it('refuses messages over the limit with RESOURCE_EXHAUSTED', async () => {
    const { error } = await grpcExport(hub.ports.otlpGrpc, Buffer.alloc(LIMIT + 1024, 0x20));
    expect(error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  });

  it('applies the limit after decompression (gzip bombs)', async () => {
    const { error } = await grpcExport(hub.ports.otlpGrpc, Buffer.alloc(LIMIT * 8, 0x20), new grpc.Metadata(), { gzip: true });
    expect(error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  });

  it('accepts gzip-compressed exports', async () => {
    const body = protobufRequest(await buildLogRecords([stateLog({ host: 'proto-gzip', commit: 'c1', at: minute(1) })]));
    const { error } = await grpcExport(hub.ports.otlpGrpc, body, new grpc.Metadata(), { gzip: true });
    expect(error).toBeNull();
    expect(await testDb.query('SELECT name FROM host WHERE name = $1', ['proto-gzip'])).toHaveLength(1);
  });
});

describe('metrics', () => {
  it('counts accepted, rejected and ignored records', async () => {
    const text = await (await fetch(`http://127.0.0.1:${hub.ports.http}/metrics`)).text();
    expect(text).toMatch(/kalypso_ingest_records_total\{transport="grpc",outcome="ignored"\} [1-9]/);
    expect(text).toMatch(/kalypso_ingest_records_total\{transport="http",outcome="rejected"\} [1-9]/);
    expect(text).toMatch(/kalypso_ingest_requests_total\{transport="http",outcome="partial"\} [1-9]/);
  });
});

describe('bearer token', () => {
  let securedDb: TestDatabase;
  let secured: RunningHub;

  beforeAll(async () => {
    securedDb = await createTestDatabase();
    secured = await startTestHub(securedDb.url, ['--ingest-token', 's3cret']);
  });

  afterAll(async () => {
    await secured.stop();
    await securedDb.drop();
  });

  it('refuses exports without the token', async () => {
    const body = protobufRequest(await buildLogRecords([stateLog({ host: 'auth', commit: 'c1', at: minute(1) })]));
    expect((await httpExport(secured.ports.otlpHttp, body)).status).toBe(401);
    const wrong = await httpExport(secured.ports.otlpHttp, body, { 'content-type': 'application/x-protobuf', authorization: 'Bearer nope' });
    expect(wrong.status).toBe(401);
    expect((await grpcExport(secured.ports.otlpGrpc, body)).error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(await securedDb.query('SELECT * FROM host')).toEqual([]);
  });

  it.each(EXPORTER_KINDS)('accepts the %s exporter configured with the token', async (kind) => {
    const exporter = createExporter(kind, secured.ports, { token: 's3cret' });
    const result = await exportLogs(exporter, await buildLogRecords([stateLog({ host: `auth-${kind}`, commit: 'c1', at: minute(1) })]));
    expect(result.code).toBe(ExportResultCode.SUCCESS);
    expect(await securedDb.query('SELECT name FROM host WHERE name = $1', [`auth-${kind}`])).toHaveLength(1);
    await exporter.shutdown();
  });
});
