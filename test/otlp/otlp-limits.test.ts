// The OTLP limits (issue 9): records per request refuse the whole request; attribute count and
// attribute length reject only the Kalypso record that exceeds them (ordinary logs are ignored
// whatever they carry); nesting deeper than the decoder allows refuses the request. Every error
// names what was exceeded and the limit.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { otlpTypes } from '../../src/sources/otlp/otlp-proto.ts';
import { encodeJson, encodeProtobuf, type FuzzAttribute, type FuzzResource, nest } from '../support/otlp-fuzz-model.ts';
import { grpcExport, httpExport } from '../support/raw-otlp.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

let testDb: TestDatabase;
let hub: RunningHub;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url, ['--max-records-per-request', '10', '--max-attributes', '8', '--max-attribute-value-length', '100']);
});

afterAll(async () => {
  await hub.stop();
  await testDb.drop();
});

const s = (value: string) => ({ s: value });
const state = (host: string, extra: FuzzAttribute[] = [], resourceExtra: FuzzAttribute[] = []): FuzzResource => ({
  attributes: [['k8s.cluster.name', s(host)], ...resourceExtra],
  records: [
    {
      time: 1_763_600_000_000_000_000n,
      observed: 0n,
      eventName: 'kalypso.deployment.state',
      attributes: [
        ['kalypso.reconciler.name', s('flux-system/apps')],
        ['kalypso.manifests.endpoint', s(`https://github.com/contoso/gitops/dev/${host}`)],
        ['vcs.ref.head.revision', s('0123456789abcdef0123456789abcdef01234567')],
        ['kalypso.deployment.status', s('success')],
        ...extra,
      ],
      body: s('Applied'),
    },
  ],
});
const ordinary = (attributes: FuzzAttribute[]): FuzzResource => ({
  attributes: [['service.name', s('web')]],
  records: [{ time: 1n, observed: 0n, eventName: '', attributes, body: s('GET / 200') }],
});
const junk = (count: number, length = 1): FuzzAttribute[] => Array.from({ length: count }, (_, n) => [`junk.${n}`, s('x'.repeat(length))]);

async function partialSuccess(resources: FuzzResource[]): Promise<{ rejected: number; message: string }> {
  const response = await httpExport(hub.ports.otlpHttp, encodeJson(resources), { 'content-type': 'application/json' });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { partialSuccess?: { rejectedLogRecords: string; errorMessage: string } };
  return { rejected: Number(body.partialSuccess?.rejectedLogRecords ?? 0), message: body.partialSuccess?.errorMessage ?? '' };
}

async function storedHosts(prefix: string): Promise<string[]> {
  const rows = await testDb.query<{ name: string }>('SELECT name FROM host WHERE name LIKE $1 ORDER BY name', [`${prefix}%`]);
  return rows.map((row) => row.name);
}

describe('records per request', () => {
  const eleven = Array.from({ length: 11 }, (_, n) => state(`too-many-${n}`));

  it('refuses a request over the limit whole, with 413 naming the limit and the setting', async () => {
    const response = await httpExport(hub.ports.otlpHttp, encodeProtobuf(eleven));
    expect(response.status).toBe(413);
    const status = otlpTypes.Status.decode(new Uint8Array(await response.arrayBuffer())) as unknown as { code: number; message: string };
    expect(status.code).toBe(8);
    expect(status.message).toBe('request has 11 log records; the limit is 10 (--max-records-per-request): send smaller batches');
    expect(await storedHosts('too-many-')).toEqual([]);
  });

  it('answers RESOURCE_EXHAUSTED over gRPC', async () => {
    const { error } = await grpcExport(hub.ports.otlpGrpc, encodeProtobuf(eleven));
    expect(error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(error?.details).toContain('the limit is 10');
  });

  it('takes a request at the limit', async () => {
    expect(await partialSuccess(eleven.slice(0, 10))).toEqual({ rejected: 0, message: '' });
    expect(await storedHosts('too-many-')).toHaveLength(10);
  });
});

describe('attributes per record and per resource', () => {
  it('rejects only the Kalypso record over the limit, naming it; ordinary logs over it are ignored', async () => {
    const answer = await partialSuccess([state('attrs-ok', junk(4)), state('attrs-over', junk(5)), ordinary(junk(50))]);
    expect(answer.rejected).toBe(1);
    expect(answer.message).toContain('resource_logs[1].scope_logs[0].log_records[0]: kalypso.deployment.state: the record has 9 attributes; the limit is 8 (--max-attributes)');
    expect(await storedHosts('attrs-')).toEqual(['attrs-ok']);
  });

  it('rejects the Kalypso records of a resource over the limit', async () => {
    const answer = await partialSuccess([state('resource-over', [], junk(8))]);
    expect(answer.message).toContain('the resource has 9 attributes; the limit is 8 (--max-attributes)');
    expect(await storedHosts('resource-over')).toEqual([]);
  });
});

describe('attribute length', () => {
  it('rejects the Kalypso record with a longer key or value (nested values included), naming the attribute', async () => {
    const answer = await partialSuccess([
      state('long-ok', [['note', s('x'.repeat(100))]]),
      state('long-value', [['note', s('x'.repeat(101))]]),
      state('long-nested', [['note', { arr: [{ kv: [['deep', s('y'.repeat(150))]] }] }]]),
      state('long-key', [['k'.repeat(101), s('x')]]),
      ordinary(junk(1, 5_000)),
    ]);
    expect(answer.rejected).toBe(3);
    expect(answer.message).toContain('log_records[0]: kalypso.deployment.state: attribute note is 101 characters long; the limit is 100 (--max-attribute-value-length)');
    expect(answer.message).toContain('attribute note is 150 characters long');
    expect(answer.message).toContain('is 101 characters long; the limit is 100');
    expect(await storedHosts('long-')).toEqual(['long-ok']);
  });
});

describe('nesting depth', () => {
  it.each([
    ['protobuf', () => httpExport(hub.ports.otlpHttp, encodeProtobuf([state('deep', [['note', nest(300)]])]))],
    ['JSON', () => httpExport(hub.ports.otlpHttp, encodeJson([state('deep', [['note', nest(300)]])]), { 'content-type': 'application/json' })],
  ])('refuses a %s request nested deeper than the decoder allows with 400 naming the depth', async (_encoding, send) => {
    const response = await send();
    expect(response.status).toBe(400);
    expect(Buffer.from(await response.arrayBuffer()).toString('latin1')).toMatch(/nested deeper than 100 message levels|nested deeper than 64 levels/);
    expect(await storedHosts('deep')).toEqual([]);
  });
});
