// A model of OTLP logs requests for fuzzing, with encoders that can write what no SDK would:
// invalid UTF-8 in protobuf strings, 64-bit edge values, any nesting. The protobuf encoder is
// written by hand from the OTLP .proto field numbers so that nothing "fixes" the input on the way.
import fc from 'fast-check';
import { hostileString, SPECIAL_STRINGS } from './fuzz.ts';

export type FuzzValue =
  | { readonly s: string }
  /** A string field holding these exact bytes (invalid UTF-8). */
  | { readonly raw: Uint8Array }
  | { readonly i: bigint }
  | { readonly d: number }
  | { readonly b: boolean }
  | { readonly bytes: Uint8Array }
  | { readonly arr: readonly FuzzValue[] }
  | { readonly kv: readonly FuzzAttribute[] }
  | { readonly none: true };
export type FuzzAttribute = readonly [string, FuzzValue];

export interface FuzzRecord {
  readonly time: bigint;
  readonly observed: bigint;
  readonly eventName: string;
  readonly attributes: readonly FuzzAttribute[];
  readonly body: FuzzValue | undefined;
}
export interface FuzzResource {
  readonly attributes: readonly FuzzAttribute[];
  readonly records: readonly FuzzRecord[];
}

export const STATE = 'kalypso.deployment.state';
export const DESCRIPTOR = 'kalypso.deployment.descriptor';

// ---- protobuf ----------------------------------------------------------------------------------

function varint(value: bigint): number[] {
  const bytes: number[] = [];
  let rest = BigInt.asUintN(64, value);
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    bytes.push(rest === 0n ? low : low | 0x80);
  } while (rest !== 0n);
  return bytes;
}
const tag = (field: number, wire: number) => varint(BigInt((field << 3) | wire));
const delimited = (field: number, bytes: Uint8Array): Buffer => Buffer.concat([Buffer.from([...tag(field, 2), ...varint(BigInt(bytes.length))]), bytes]);
const fixed64 = (field: number, value: bigint): Buffer => {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64LE(BigInt.asUintN(64, value));
  return Buffer.concat([Buffer.from(tag(field, 1)), bytes]);
};
const text = (value: string) => Buffer.from(value, 'utf8');

function anyValueProto(value: FuzzValue): Buffer {
  if ('s' in value) return delimited(1, text(value.s));
  if ('raw' in value) return delimited(1, value.raw);
  if ('b' in value) return Buffer.from([...tag(2, 0), value.b ? 1 : 0]);
  if ('i' in value) return Buffer.from([...tag(3, 0), ...varint(value.i)]);
  if ('d' in value) {
    const bytes = Buffer.alloc(8);
    bytes.writeDoubleLE(value.d);
    return Buffer.concat([Buffer.from(tag(4, 1)), bytes]);
  }
  if ('bytes' in value) return delimited(7, value.bytes);
  if ('arr' in value) return delimited(5, Buffer.concat(value.arr.map((item) => delimited(1, anyValueProto(item)))));
  if ('kv' in value) return delimited(6, Buffer.concat(value.kv.map((attribute) => delimited(1, keyValueProto(attribute)))));
  return Buffer.alloc(0);
}
const keyValueProto = ([key, value]: FuzzAttribute): Buffer => Buffer.concat([delimited(1, text(key)), delimited(2, anyValueProto(value))]);

function recordProto(record: FuzzRecord): Buffer {
  return Buffer.concat([
    fixed64(1, record.time),
    fixed64(11, record.observed),
    ...(record.body === undefined ? [] : [delimited(5, anyValueProto(record.body))]),
    ...record.attributes.map((attribute) => delimited(6, keyValueProto(attribute))),
    ...(record.eventName === '' ? [] : [delimited(12, text(record.eventName))]),
  ]);
}

export function encodeProtobuf(resources: readonly FuzzResource[]): Buffer {
  return Buffer.concat(
    resources.map((resource) =>
      delimited(
        1,
        Buffer.concat([
          delimited(1, Buffer.concat(resource.attributes.map((attribute) => delimited(1, keyValueProto(attribute))))),
          delimited(2, Buffer.concat(resource.records.map((record) => delimited(2, recordProto(record))))),
        ]),
      ),
    ),
  );
}

// ---- JSON --------------------------------------------------------------------------------------

function anyValueJson(value: FuzzValue): unknown {
  if ('s' in value) return { stringValue: value.s };
  // Invalid UTF-8 cannot be written in JSON text; its equivalent is the lone surrogates the hub reads it as.
  if ('raw' in value) return { stringValue: [...value.raw].map((byte) => String.fromCharCode(byte < 0x80 ? byte : 0xdc00 + byte)).join('') };
  if ('b' in value) return { boolValue: value.b };
  if ('i' in value) return { intValue: BigInt.asIntN(64, value.i).toString() };
  if ('d' in value) return { doubleValue: Number.isFinite(value.d) ? value.d : String(value.d) };
  if ('bytes' in value) return { bytesValue: Buffer.from(value.bytes).toString('base64') };
  if ('arr' in value) return { arrayValue: { values: value.arr.map(anyValueJson) } };
  if ('kv' in value) return { kvlistValue: { values: value.kv.map(keyValueJson) } };
  return {};
}
const keyValueJson = ([key, value]: FuzzAttribute) => ({ key, value: anyValueJson(value) });

export function encodeJson(resources: readonly FuzzResource[]): string {
  return JSON.stringify({
    resourceLogs: resources.map((resource) => ({
      resource: { attributes: resource.attributes.map(keyValueJson) },
      scopeLogs: [
        {
          logRecords: resource.records.map((record) => ({
            timeUnixNano: record.time.toString(),
            observedTimeUnixNano: record.observed.toString(),
            ...(record.eventName === '' ? {} : { eventName: record.eventName }),
            attributes: record.attributes.map(keyValueJson),
            ...(record.body === undefined ? {} : { body: anyValueJson(record.body) }),
          })),
        },
      ],
    })),
  });
}

// ---- arbitraries -------------------------------------------------------------------------------

const s = (value: string): FuzzValue => ({ s: value });
const hex40 = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((bytes) => Buffer.from(bytes).toString('hex'));
/** 2000-01-01 … 2100-01-01, in nanoseconds. */
const validTime = fc.bigInt({ min: 946_684_800_000n, max: 4_102_444_800_000n }).map((ms) => ms * 1_000_000n);

/** A valid state report, alone in its resource (the host is a resource attribute). */
export function stateResource(id: string): fc.Arbitrary<FuzzResource> {
  return fc
    .record({
      commit: hex40,
      status: fc.constantFrom('success', 'failure', 'in_progress', 'succeeded', 'failed'),
      message: fc.oneof(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.constantFrom('Applied revision', 'a\u0000b', 'x\ud800y')),
      time: validTime,
    })
    .map(({ commit, status, message, time }) => ({
      attributes: [['k8s.cluster.name', s(`host-${id}`)]],
      records: [
        {
          time,
          observed: 0n,
          eventName: STATE,
          attributes: [
            ['kalypso.reconciler.name', s(`flux-system/r-${id}`)],
            ['kalypso.reconciler.type', s('flux')],
            ['kalypso.manifests.endpoint', s(`https://github.com/contoso/gitops/dev/t-${id}`)],
            ['vcs.ref.head.revision', s(`dev@sha1:${commit}`)],
            ['kalypso.deployment.status', s(status)],
          ],
          body: s(message),
        },
      ],
    }));
}

/** A valid deployment descriptor for its own deployment target. */
export function descriptorResource(id: string): fc.Arbitrary<FuzzResource> {
  return fc.record({ commit: hex40, time: validTime }).map(({ commit, time }) => ({
    attributes: [['service.name', s('cd-pipeline')]],
    records: [
      {
        time,
        observed: 0n,
        eventName: DESCRIPTOR,
        attributes: [['vcs.ref.head.revision', s(commit)]],
        body: {
          kv: [
            ['workload', { kv: [['name', s('hello-world')], ['application', { kv: [['name', s('greeting-service')], ['workspace', { kv: [['name', s('fuzz')]] }]] }]] }],
            [
              'deploymentTarget',
              {
                kv: [
                  ['name', s(`t-${id}`)],
                  ['environment', s('fuzz')],
                  ['manifests', { kv: [['repo', s('https://github.com/contoso/gitops')], ['branch', s('fuzz')], ['path', s(`t-${id}`)]] }],
                ],
              },
            ],
            ['workloadVersion', { kv: [['version', s('1.0.0')], ['build', s('b1')]] }],
          ],
        },
      },
    ],
  }));
}

export const ordinaryResource: fc.Arbitrary<FuzzResource> = fc.record({
  attributes: fc.constant([['service.name', s('web')]] as FuzzAttribute[]),
  records: fc.array(
    fc.record({ time: validTime, observed: fc.constant(0n), eventName: fc.constantFrom('', 'http.request'), attributes: fc.constant([] as FuzzAttribute[]), body: fc.string().map(s) }),
    { minLength: 1, maxLength: 3 },
  ),
});

/**
 * Nesting within what any decoder accepts (protobufjs stops at 100 message levels, three per
 * AnyValue level): deeper requests are refused whole, which otlp-limits.test.ts checks.
 */
const MAX_FUZZ_DEPTH = 20;

/** Values of the wrong type, hostile strings, invalid UTF-8, huge and deeply nested values. */
export const hostileFuzzValue: fc.Arbitrary<FuzzValue> = fc.oneof(
  { weight: 4, arbitrary: hostileString.map(s) },
  { weight: 1, arbitrary: fc.constantFrom<FuzzValue>({ raw: Buffer.from([0xff]) }, { raw: Buffer.from([0x61, 0xc3]) }, { raw: Buffer.from([0xed, 0xa0, 0x80]) }, { raw: Buffer.from('host\xfe', 'latin1') }) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }).map((i): FuzzValue => ({ i })) },
  { weight: 1, arbitrary: fc.double().map((d): FuzzValue => ({ d })) },
  { weight: 1, arbitrary: fc.boolean().map((b): FuzzValue => ({ b })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 16 }).map((bytes): FuzzValue => ({ bytes })) },
  { weight: 1, arbitrary: fc.constantFrom<FuzzValue>({ none: true }, { arr: [] }, { kv: [] }, { arr: [s('a'), { i: 1n }] }, { kv: [['', s('')]] }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: MAX_FUZZ_DEPTH }).map((depth) => nest(depth)) },
);

export function nest(depth: number): FuzzValue {
  let value: FuzzValue = s('leaf');
  for (let level = 0; level < depth; level += 1) value = level % 2 === 0 ? { arr: [value] } : { kv: [['k', value]] };
  return value;
}

export const EDGE_TIMES = [0n, 1n, 999_999n, 2n ** 63n - 1n, 2n ** 63n, 2n ** 64n - 1n] as const;

type Mutation = (resource: FuzzResource) => FuzzResource;
const onRecord = (change: (record: FuzzRecord) => FuzzRecord): Mutation => (resource) => ({ ...resource, records: resource.records.map(change) });
const replaceAttribute = (list: readonly FuzzAttribute[], key: string, value: FuzzValue | undefined): FuzzAttribute[] => {
  const kept = list.filter(([name]) => name !== key);
  return value === undefined ? kept : list.some(([name]) => name === key) ? list.map(([name, old]) => [name, name === key ? value : old]) : [...kept, [key, value]];
};
const RECORD_KEYS = ['kalypso.reconciler.name', 'kalypso.reconciler.type', 'kalypso.manifests.endpoint', 'vcs.ref.head.revision', 'kalypso.deployment.status', 'kalypso.host.type', 'kalypso.manifests.storage_type', 'event.name'];

/** One change to a resource and its records; several may apply to one resource. */
export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.tuple(fc.constantFrom(...RECORD_KEYS), fc.option(hostileFuzzValue)).map(([key, value]) =>
    onRecord((record) => ({ ...record, attributes: replaceAttribute(record.attributes, key, value ?? undefined) })),
  ),
  fc.tuple(fc.constantFrom('k8s.cluster.name', 'host.name', 'kalypso.host.type'), fc.option(hostileFuzzValue)).map(
    ([key, value]): Mutation => (resource) => ({ ...resource, attributes: replaceAttribute(resource.attributes, key, value ?? undefined) }),
  ),
  fc.option(hostileFuzzValue).map((body) => onRecord((record) => ({ ...record, body: body ?? undefined }))),
  fc.tuple(fc.constantFrom(...EDGE_TIMES), fc.constantFrom(...EDGE_TIMES)).map(([time, observed]) => onRecord((record) => ({ ...record, time, observed }))),
  fc.constantFrom('', STATE, DESCRIPTOR, 'KALYPSO.DEPLOYMENT.STATE', ...SPECIAL_STRINGS.slice(0, 8)).map((eventName) => onRecord((record) => ({ ...record, eventName }))),
  // Over the attribute limits (256 attributes, 64 KiB values) by a little or a lot.
  fc.integer({ min: 250, max: 1_200 }).map((count) =>
    onRecord((record) => ({ ...record, attributes: [...record.attributes, ...Array.from({ length: count }, (_, n): FuzzAttribute => [`junk.${n}`, s('x')])] })),
  ),
  fc.integer({ min: 65_000, max: 70_000 }).map((length) => onRecord((record) => ({ ...record, attributes: [...record.attributes, ['note', s('n'.repeat(length))]] }))),
  // Hostile values anywhere in a descriptor's body.
  fc.tuple(fc.constantFrom('name', 'environment', 'version', 'repo', 'branch', 'path', 'workload', 'manifests'), hostileFuzzValue).map(([field, value]) =>
    onRecord((record) => ({ ...record, body: record.body === undefined ? undefined : replaceDeep(record.body, field, value) })),
  ),
);

function replaceDeep(value: FuzzValue, field: string, replacement: FuzzValue): FuzzValue {
  if ('kv' in value) return { kv: value.kv.map(([key, item]): FuzzAttribute => [key, key === field ? replacement : replaceDeep(item, field, replacement)]) };
  return value;
}
