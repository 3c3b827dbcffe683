// Memory for decoding is budgeted (src/sources/otlp/decode-memory.ts): a request that alone would
// decode into more than the budget is refused as too large, one that does not fit beside the
// requests in flight as "overloaded, retry" — those in flight counted, once decoded, for what they
// hold while they wait for the database — and a hub with the heap caps of `npm start` survives a
// request that, decoded, would be larger than its whole heap.
import { request } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { decodedSizeEstimate, retainedSizeBound } from '../../src/sources/otlp/decode-memory.ts';
import { otlpTypes } from '../../src/sources/otlp/otlp-proto.ts';
import { freeHubPorts, spawnHub, waitHubReady } from '../support/hub-process.ts';
import { stateLog } from '../support/kalypso-logs.ts';
import { buildLogRecords } from '../support/otlp-client.ts';
import { grpcExport, httpExport, protobufRequest } from '../support/raw-otlp.ts';
import { minute } from '../support/records.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';
import { waitFor } from '../support/wait-for.ts';

const BUDGET = 8 * 1_048_576;
let testDb: TestDatabase;
let hub: RunningHub;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url, [], { decodeMemoryBytes: BUDGET });
});

afterAll(async () => {
  await hub.stop();
  await testDb.drop();
});

/** A protobuf request of state reports from hosts `<prefix>-0…`, of about `bytes` on the wire. */
async function stateRequest(prefix: string, bytes: number): Promise<Buffer & { records: number }> {
  const one = protobufRequest(await buildLogRecords([stateLog({ host: `${prefix}-0`, commit: 'c1', at: minute(1) })])).length;
  const records = Math.ceil(bytes / one);
  const body = protobufRequest(await buildLogRecords(Array.from({ length: records }, (_, i) => stateLog({ host: `${prefix}-${i}`, commit: 'c1', at: minute(1) }))));
  return Object.assign(body, { records });
}

/** Sends the headers and the first kilobyte of `body`, and waits for the answer without sending the rest. */
function answerToHeadersOnly(port: number, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/v1/logs', headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length } },
      (response) => {
        response.resume();
        req.destroy();
        resolve(response.statusCode ?? 0);
      },
    );
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    req.write(body.subarray(0, 1024));
  });
}

/** The decode memory the hub's exports hold now (its /metrics). */
async function reservedBytes(): Promise<number> {
  const metrics = await (await fetch(`http://127.0.0.1:${hub.ports.http}/metrics`)).text();
  return Number(/^kalypso_ingest_decode_memory_reserved_bytes (\d+)$/m.exec(metrics)![1]);
}

const hostsNamed = async (prefix: string): Promise<number> =>
  (await testDb.query<{ n: number }>('SELECT count(*)::int AS n FROM host WHERE name LIKE $1', [`${prefix}-%`]))[0]!.n;

describe('decode memory budget', () => {
  it('refuses a request that alone would decode into more than the budget, on both transports, naming the way out', async () => {
    // 40× on protobuf: 256 KB would take 10 MiB decoded, over the 8 MiB budget.
    const body = await stateRequest('big', 256 * 1024);
    const http = await httpExport(hub.ports.otlpHttp, body);
    expect(http.status).toBe(413);
    const status = otlpTypes.Status.decode(new Uint8Array(await http.arrayBuffer())) as unknown as { code: number; message: string };
    expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(status.message).toMatch(/would take about 1\d\.\d MiB of memory decoded; this hub decodes at most 8\.0 MiB at once .*--max-old-space-size.*send smaller batches/);
    const viaGrpc = await grpcExport(hub.ports.otlpGrpc, body);
    expect(viaGrpc.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(await hostsNamed('big')).toBe(0);
    // JSON grows less when decoded (10×): the same records as JSON fit.
    expect((await stateRequest('small', 64 * 1024)).length).toBeLessThan(BUDGET / 40);
    expect((await httpExport(hub.ports.otlpHttp, await stateRequest('small', 64 * 1024))).status).toBe(200);
  });

  it('counts a decoded export waiting for the database for what it holds, and answers "overloaded, retry" to a request that does not fit beside those', async () => {
    // Each ~6 MiB to decode (40×), so two could not wait together if that were held for the write.
    const held = await Promise.all(['held-a', 'held-b', 'held-c'].map((prefix) => stateRequest(prefix, 150 * 1024)));
    const later = await stateRequest('later', 180 * 1024); // ~7 MiB: does not fit beside the three
    const holding = held.reduce((sum, body) => sum + retainedSizeBound(body.length, body.records), 0);
    expect(holding + decodedSizeEstimate(later.length, 'protobuf')).toBeGreaterThan(BUDGET);
    const lock = new pg.Client({ connectionString: testDb.url });
    await lock.connect();
    await lock.query('BEGIN; LOCK TABLE deployment_state IN ACCESS EXCLUSIVE MODE');
    let answers: Promise<Response[]> | undefined;
    try {
      answers = Promise.all(held.map((body) => httpExport(hub.ports.otlpHttp, body)));
      // All three decoded, and wait for the lock or for a transaction, holding their records.
      await waitFor(async () => (await reservedBytes()) === holding, 'the three exports to wait, each holding its records');
      const refused = await httpExport(hub.ports.otlpHttp, later);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      const viaGrpc = await grpcExport(hub.ports.otlpGrpc, later);
      expect(viaGrpc.error?.code).toBe(grpc.status.UNAVAILABLE);
      // Over HTTP the refusal comes before the body is read: a sender that has sent only the
      // headers and a first kilobyte already has its answer.
      expect(await answerToHeadersOnly(hub.ports.otlpHttp, later)).toBe(503);
    } finally {
      await lock.query('COMMIT');
      await lock.end();
    }
    expect((await answers).map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(await reservedBytes()).toBe(0);
    expect((await httpExport(hub.ports.otlpHttp, later)).status).toBe(200);
    for (const [index, prefix] of ['held-a', 'held-b', 'held-c'].entries()) expect(await hostsNamed(prefix)).toBe(held[index]!.records);
    expect(await hostsNamed('later')).toBe(later.records);
  });
});

describe('a hub with the heap caps of npm start', () => {
  it('survives a request that would decode into more than its whole heap', async () => {
    // 2.5 M tiny attributes in 12 MB: decoded, well over 400 MB — more than the 256 MiB heap.
    const attributes = Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, value: { stringValue: 'v' } }));
    const records = Array.from({ length: 50_000 }, () => ({ eventName: 'kalypso.deployment.state', attributes }));
    const body = Buffer.from(otlpTypes.ExportLogsServiceRequest.encode({ resourceLogs: [{ scopeLogs: [{ logRecords: records }] }] }).finish());
    expect(body.length).toBeGreaterThan(10_000_000);
    const ports = await freeHubPorts();
    const child = spawnHub(testDb.url, ports, [], ['--max-semi-space-size=32', '--max-old-space-size=256']);
    try {
      await waitHubReady(child);
      const answers = await Promise.all([httpExport(ports.otlpHttp, body), grpcExport(ports.otlpGrpc, body)]);
      expect(answers[0].status).toBe(413);
      expect(answers[1].error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect((await fetch(`http://127.0.0.1:${ports.http}/healthz`)).status).toBe(200);
      expect(child.process.exitCode).toBeNull();
    } finally {
      child.process.kill('SIGTERM');
      await child.exited;
    }
  }, 60_000);
});
