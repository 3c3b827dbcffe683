// The decoder against bytes produced by the official OpenTelemetry serializers, so that our .proto
// files and JSON reader agree with what real clients put on the wire.
import { readFile } from 'node:fs/promises';
import { JsonLogsSerializer, ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import { describe, expect, it } from 'vitest';
import { decodeLogsJson } from '../../src/sources/otlp/decode-json.ts';
import { decodeLogsProtobuf } from '../../src/sources/otlp/decode-protobuf.ts';
import { type LogsRequestWire, OtlpDecodeError } from '../../src/wire/otlp-logs.ts';
import { buildLogRecords } from '../support/otlp-client.ts';

const TIME = new Date('2026-11-20T09:14:02.123Z');

async function sample() {
  return buildLogRecords([
    {
      resource: { 'k8s.cluster.name': 'aks-dev-eus' },
      eventName: 'kalypso.deployment.state',
      attributes: { 'kalypso.reconciler.name': 'flux', retries: 3, ratio: 0.5, ok: true, big: 2 ** 40, list: ['a', 'b'] },
      body: 'Applied revision: dev@sha1:4f6e2a9c',
      time: TIME,
    },
    {
      resource: { 'service.name': 'cd' },
      eventName: 'kalypso.deployment.descriptor',
      body: { workload: { name: 'hello-world' }, count: 2 },
      time: TIME,
    },
  ]);
}

function expectSample(decoded: LogsRequestWire): void {
  expect(decoded.resourceLogs).toHaveLength(2);
  const [state, descriptor] = decoded.resourceLogs;
  expect({ ...state!.resourceAttributes }).toMatchObject({ 'k8s.cluster.name': 'aks-dev-eus' });
  const stateRecord = state!.scopeLogs[0]!.logRecords[0]!;
  expect(stateRecord.eventName).toBe('kalypso.deployment.state');
  expect(stateRecord.timeUnixNano).toBe(BigInt(TIME.getTime()) * 1_000_000n);
  expect(stateRecord.body).toBe('Applied revision: dev@sha1:4f6e2a9c');
  expect({ ...stateRecord.attributes }).toEqual({
    'kalypso.reconciler.name': 'flux',
    retries: 3,
    ratio: 0.5,
    ok: true,
    big: 2 ** 40,
    list: ['a', 'b'],
  });
  const body = descriptor!.scopeLogs[0]!.logRecords[0]!.body as Record<string, unknown>;
  expect({ ...(body['workload'] as object) }).toEqual({ name: 'hello-world' });
  expect(body['count']).toBe(2);
}

describe('OTLP decoding', () => {
  it('decodes protobuf written by the OpenTelemetry serializer', async () => {
    const bytes = ProtobufLogsSerializer.serializeRequest(await sample());
    expectSample(decodeLogsProtobuf(bytes!));
  });

  it('decodes JSON written by the OpenTelemetry serializer', async () => {
    const bytes = JsonLogsSerializer.serializeRequest(await sample());
    expectSample(decodeLogsJson(Buffer.from(bytes!).toString('utf8')));
  });

  it('accepts snake_case JSON keys and 64-bit integers as strings or numbers', () => {
    const decoded = decodeLogsJson(
      JSON.stringify({
        resource_logs: [
          {
            resource: { attributes: [{ key: 'host.name', value: { string_value: 'vm-1' } }] },
            scope_logs: [
              {
                log_records: [
                  { time_unix_nano: 1_763_630_049_000_000_000, event_name: 'x', attributes: [{ key: 'n', value: { int_value: '9007199254740993' } }] },
                ],
              },
            ],
          },
        ],
      }),
    );
    const record = decoded.resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!;
    expect(record.eventName).toBe('x');
    expect(record.timeUnixNano).toBe(1_763_630_049_000_000_000n);
    expect(record.attributes['n']).toBe(9_007_199_254_740_993n);
    expect(decoded.resourceLogs[0]!.resourceAttributes['host.name']).toBe('vm-1');
  });

  it('decodes the k8sobjects receiver record of the fixtures', async () => {
    const text = await readFile(new URL('../fixtures/k8sobjects-kustomization-record.json', import.meta.url), 'utf8');
    const record = decodeLogsJson(text).resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!;
    expect(record.observedTimeUnixNano).toBe(1_763_630_049_000_000_000n);
    const body = record.body as Record<string, Record<string, Record<string, unknown>>>;
    expect(body['object']?.['status']?.['lastAppliedRevision']).toBe('prod@sha1:0d5c1a7e9b3f4c2d8e6a1b0c9d8e7f6a5b4c3d2e');
  });

  it('keeps keys such as __proto__ as plain data', () => {
    const decoded = decodeLogsJson(
      '{"resourceLogs":[{"resource":{"attributes":[{"key":"__proto__","value":{"stringValue":"x"}}]},"scopeLogs":[]}]}',
    );
    expect(decoded.resourceLogs[0]!.resourceAttributes['__proto__']).toBe('x');
    expect(({} as Record<string, unknown>)['x']).toBeUndefined();
  });

  it.each([
    ['truncated protobuf', () => decodeLogsProtobuf(Uint8Array.from([0x0a, 0xff, 0xff, 0x01]))],
    ['not JSON', () => decodeLogsJson('{"resourceLogs": [')],
    ['JSON of the wrong shape', () => decodeLogsJson('{"resourceLogs": {"a": 1}}')],
    ['a negative timestamp', () => decodeLogsJson('{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"-5"}]}]}]}')],
    [
      'values nested too deep',
      () => decodeLogsJson(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":${'{"arrayValue":{"values":['.repeat(80)}${']}}'.repeat(80)}}]}]}]}`),
    ],
  ])('refuses %s with a decode error', (_name, decode) => {
    expect(decode).toThrow(OtlpDecodeError);
  });
});
