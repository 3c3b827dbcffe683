// Hostile OTLP bodies over every transport (HTTP protobuf, HTTP JSON, HTTP gzip, gRPC): valid
// Kalypso requests with mutations (wrong types, NULs, lone surrogates, invalid UTF-8, huge and
// deeply nested values, 64-bit edge times, attribute floods), truncated and corrupted bytes.
// Properties: the hub stays up; the status is one a collector handles right (never 500, UNKNOWN
// or INTERNAL, and never 503 with the database up); and nothing partial is stored — the rows
// added equal the records accepted, and every stored state says exactly what its record said.
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { canonicalCommitId } from '../../src/model/commit-id.ts';
import { normalizeManifestsEndpoint } from '../../src/model/manifests-endpoint.ts';
import { FieldReader } from '../../src/normalize/field-reader.ts';
import { otlpTypes } from '../../src/sources/otlp/otlp-proto.ts';
import { fuzzRuns } from '../support/fuzz.ts';
import {
  DESCRIPTOR,
  descriptorResource,
  encodeJson,
  encodeProtobuf,
  type FuzzResource,
  type FuzzValue,
  mutation,
  ordinaryResource,
  STATE,
  stateResource,
} from '../support/otlp-fuzz-model.ts';
import { grpcExport, httpExport } from '../support/raw-otlp.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

const RUNS = fuzzRuns(15);
let testDb: TestDatabase;
let hub: RunningHub;
/** One connection for the checks: hundreds of runs each look at the database several times. */
let client: pg.Client;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url, ['--max-request-size', '4MiB']);
  client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
});

afterAll(async () => {
  await client.end();
  await hub.stop();
  await testDb.drop();
});

async function query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]> {
  return (await client.query<R>(text, values)).rows;
}

let runs = 0;
/**
 * The request with its `@@` placeholders made unique to this run: fast-check replays inputs while
 * shrinking, and a replayed report would be a duplicate the hub rightly stores once.
 */
function fresh<T>(value: T, token = `${process.pid}.${(runs += 1)}`): T {
  if (typeof value === 'string') return value.replaceAll('@@', token) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => fresh(item, token)) as T;
  if (typeof value === 'object' && value !== null && !(value instanceof Uint8Array)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fresh(item, token)])) as T;
  }
  return value;
}

type Transport = 'http-protobuf' | 'http-json' | 'http-gzip' | 'grpc';
interface Answer {
  /** HTTP status, or the gRPC code as `grpc:<code>`. */
  readonly status: string;
  readonly rejected: number;
  readonly message: string;
}

async function send(transport: Transport, resources: readonly FuzzResource[], mangle: (body: Buffer) => Buffer = (body) => body): Promise<Answer> {
  if (transport === 'grpc') {
    const { error, response } = await grpcExport(hub.ports.otlpGrpc, mangle(encodeProtobuf(resources)));
    if (error !== null) return { status: `grpc:${grpc.status[error.code]}`, rejected: 0, message: error.details };
    return { status: 'grpc:OK', ...partialSuccess(response!) };
  }
  const json = transport === 'http-json';
  const raw = mangle(json ? Buffer.from(encodeJson(resources)) : encodeProtobuf(resources));
  const headers: Record<string, string> = { 'content-type': json ? 'application/json' : 'application/x-protobuf' };
  if (transport === 'http-gzip') headers['content-encoding'] = 'gzip';
  const response = await httpExport(hub.ports.otlpHttp, transport === 'http-gzip' ? gzipSync(raw) : raw, headers);
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) return { status: String(response.status), rejected: 0, message: body.toString() };
  if (json) {
    const answer = JSON.parse(body.toString()) as { partialSuccess?: { rejectedLogRecords?: string; errorMessage?: string } };
    return { status: '200', rejected: Number(answer.partialSuccess?.rejectedLogRecords ?? 0), message: answer.partialSuccess?.errorMessage ?? '' };
  }
  return { status: '200', ...partialSuccess(body) };
}

function partialSuccess(body: Buffer): { rejected: number; message: string } {
  const decoded = otlpTypes.ExportLogsServiceResponse.toObject(otlpTypes.ExportLogsServiceResponse.decode(body), { longs: Number }) as {
    partialSuccess?: { rejectedLogRecords?: number; errorMessage?: string };
  };
  return { rejected: decoded.partialSuccess?.rejectedLogRecords ?? 0, message: decoded.partialSuccess?.errorMessage ?? '' };
}

async function counts(): Promise<{ states: number; assignments: number }> {
  const [row] = await query<{ states: string; assignments: string }>(
    'SELECT (SELECT count(*) FROM deployment_state_history) AS states, (SELECT count(*) FROM deployment_assignment) AS assignments',
  );
  return { states: Number(row!.states), assignments: Number(row!.assignments) };
}

async function expectHealthy(): Promise<void> {
  expect((await fetch(`http://127.0.0.1:${hub.ports.http}/healthz`)).status).toBe(200);
}

/** What the hub reads as the record's kind: event_name, else the `event.name` attribute. */
function kindOf(record: FuzzResource['records'][number]): string | undefined {
  if (record.eventName !== '') return record.eventName;
  const attribute = record.attributes.find(([key]) => key === 'event.name')?.[1];
  return attribute !== undefined && 's' in attribute ? attribute.s : undefined;
}

const STATUSES: Record<string, string> = { success: 'success', failure: 'failure', in_progress: 'in_progress', succeeded: 'success', failed: 'failure' };
const storable = (text: string) => !text.includes('\u0000') && text.isWellFormed();

/**
 * Every stored state of an unmutated host and reconciler says what its record said: endpoint,
 * commit, status, message and time. A record whose fields were not all valid text stored nothing.
 */
async function expectStatesAsSent(resources: readonly FuzzResource[], transport: Transport): Promise<void> {
  // A JS string with a lone surrogate cannot be written as UTF-8: the protobuf encoder sends
  // U+FFFD in its place — valid text, which the hub rightly stores. JSON escapes it as it is.
  const sent = (value: FuzzValue | undefined): FuzzValue | undefined =>
    value !== undefined && 's' in value && transport !== 'http-json' ? { s: value.s.toWellFormed() } : value;
  for (const resource of resources) {
    const host = sent(resource.attributes.find(([key]) => key === 'k8s.cluster.name')?.[1]);
    for (const record of resource.records) {
      const value = (key: string): FuzzValue | undefined => sent(record.attributes.find(([name]) => name === key)?.[1]);
      const reconciler = value('kalypso.reconciler.name');
      if (kindOf(record) !== STATE || host === undefined || !('s' in host) || reconciler === undefined || !('s' in reconciler) || !storable(host.s) || !storable(reconciler.s)) continue;
      const rows = await query<{ endpoint: string; commit: string; status: string; message: string; observed: Date }>(
        `SELECT e.endpoint, h.gitops_commit_id AS commit, h.status::text AS status, h.status_message AS message, h.observed_at AS observed
           FROM deployment_state_history h JOIN reconciler r ON r.id = h.reconciler_id JOIN host ON host.id = r.host_id
           JOIN manifests_endpoint e ON e.id = h.manifests_endpoint_id
          WHERE host.name = $1 AND r.name = $2 AND h.received_at > now() - interval '1 minute'`,
        [host.s.trim(), reconciler.s.trim()],
      );
      if (rows.length === 0) continue;
      const endpoint = value('kalypso.manifests.endpoint');
      const commit = value('vcs.ref.head.revision');
      const status = value('kalypso.deployment.status');
      for (const text of [endpoint, commit]) expect(text !== undefined && 's' in text && storable(text.s), `stored despite ${JSON.stringify(text)}`).toBe(true);
      const row = rows.at(-1)!;
      expect(row.endpoint).toBe(normalizeManifestsEndpoint((endpoint as { s: string }).s));
      expect(row.commit).toBe(canonicalCommitId((commit as { s: string }).s));
      if (status !== undefined && 's' in status && status.s.trim() !== '') expect(row.status).toBe(STATUSES[status.s.trim().toLowerCase()]);
      const body = sent(record.body);
      if (body !== undefined && 's' in body) expect(row.message).toBe(new FieldReader().message(body.s));
      const time = record.time !== 0n ? record.time : record.observed;
      if (time > 0n && time < 4_102_444_800_000_000_000n) expect(row.observed.getTime()).toBe(Number(time / 1_000_000n));
    }
  }
}

const kinds = fc.constantFrom('state', 'state', 'descriptor', 'ordinary');
const request = fc
  .array(fc.tuple(kinds, fc.array(mutation, { maxLength: 2 })), { minLength: 1, maxLength: 6 })
  .chain((plan) =>
    fc
      .tuple(
        ...plan.map(([kind, mutations], index) => {
          const id = `@@-${index}`;
          const base = kind === 'state' ? stateResource(id) : kind === 'descriptor' ? descriptorResource(id) : ordinaryResource;
          return base.map((resource) => mutations.reduce((changed, change) => change(changed), resource));
        }),
      )
      .map((resources) => [...resources]),
  );

describe.each(['http-protobuf', 'http-json', 'http-gzip', 'grpc'] as const)('hostile records over %s', (transport) => {
  it('answers OK (with partial success), stores exactly the records it accepted, and stays up', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (generated) => {
        const resources = fresh(generated);
        const before = await counts();
        const answer = await send(transport, resources);
        const after = await counts();
        await expectHealthy();
        expect(answer.status, answer.message).toBe(transport === 'grpc' ? 'grpc:OK' : '200');
        const records = resources.flatMap((resource) => resource.records);
        const ours = records.filter((record) => kindOf(record) === STATE || kindOf(record) === DESCRIPTOR);
        const stored = after.states - before.states + (after.assignments - before.assignments);
        expect(stored, answer.message).toBe(ours.length - answer.rejected);
        expect(after.states - before.states).toBeLessThanOrEqual(ours.filter((record) => kindOf(record) === STATE).length);
        if (answer.rejected > 0) expect(answer.message).toMatch(/resource_logs\[\d+\]\.scope_logs\[\d+\]\.log_records\[\d+\]: /);
        await expectStatesAsSent(resources, transport);
      }),
      { numRuns: RUNS },
    );
  });
});

describe.each(['http-protobuf', 'http-json', 'grpc'] as const)('corrupted bytes over %s', (transport) => {
  const corruption = fc.oneof(
    fc.nat().map((cut) => (body: Buffer) => body.subarray(0, cut % Math.max(1, body.length))),
    fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([at, byte]) => (body: Buffer) => {
      const copy = Buffer.from(body);
      if (copy.length > 0) copy[at % copy.length] = byte;
      return copy;
    }),
    fc.uint8Array({ minLength: 1, maxLength: 64 }).map((junk) => (body: Buffer) => Buffer.concat([body, junk])),
  );

  it('answers OK or "invalid" (never 500, UNKNOWN, INTERNAL or 503) and stores no more than was sent', async () => {
    await fc.assert(
      fc.asyncProperty(request, corruption, async (generated, mangle) => {
        const resources = fresh(generated);
        const before = await counts();
        const answer = await send(transport, resources, mangle);
        const after = await counts();
        await expectHealthy();
        expect(['200', '400', 'grpc:OK', 'grpc:INVALID_ARGUMENT'], answer.message).toContain(answer.status);
        const ours = resources.flatMap((resource) => resource.records).filter((record) => kindOf(record) === STATE || kindOf(record) === DESCRIPTOR);
        expect(after.states - before.states + (after.assignments - before.assignments)).toBeLessThanOrEqual(ours.length);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('JSON numbers and strings where 64-bit integers belong', () => {
  const value = fc.oneof(
    fc.constantFrom<unknown>('-1', '18446744073709551616', '1e3', ' 5', '0x10', 'abc', -1, 1e300, -0, 1.5, 2 ** 64, null, true, [], {}, '18446744073709551615', '0'),
    fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
  );

  it('decodes valid times, refuses the rest with 400, never stores a garbled time', async () => {
    await fc.assert(
      fc.asyncProperty(value, value, async (time, intValue) => {
        const body = JSON.stringify({
          resourceLogs: [{ resource: { attributes: [{ key: 'k8s.cluster.name', value: { stringValue: `json-int-${String(Math.random()).slice(2)}` } }] }, scopeLogs: [{ logRecords: [{ timeUnixNano: time, eventName: 'x', attributes: [{ key: 'n', value: { intValue } }] }] }] }],
        });
        const response = await httpExport(hub.ports.otlpHttp, body, { 'content-type': 'application/json' });
        expect([200, 400]).toContain(response.status);
        await expectHealthy();
      }),
      { numRuns: RUNS * 2 },
    );
  });
});
