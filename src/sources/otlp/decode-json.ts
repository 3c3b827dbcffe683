// OTLP/JSON text → the records of a request, handed to a visitor one by one (see wire/otlp-logs.ts).
// The specification's JSON uses lowerCamelCase keys, 64-bit integers as decimal strings and bytes
// as base64; like the collector, the hub also accepts snake_case keys and plain numbers.
import { MAX_VALUE_DEPTH } from './decode-protobuf.ts';
import {
  type AnyValue,
  Attributes,
  collectLogs,
  type KeyValues,
  KeyValuesBuilder,
  type LogRecordView,
  type LogsRequestWire,
  type LogsVisitor,
  newLogRecordView,
  OtlpDecodeError,
  type PairSink,
} from '../../wire/otlp-logs.ts';

type JsonObject = { readonly [key: string]: unknown };

/** Walks an OTLP/JSON logs request, handing each record to `visitor` in turn. */
export function walkLogsJson(text: string, visitor: LogsVisitor): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new OtlpDecodeError(`invalid OTLP JSON payload: ${(error as Error).message}`);
  }
  const request = object(parsed, 'request');
  const view = newLogRecordView();
  array(field(request, 'resourceLogs'), 'resourceLogs').forEach((item, r) => {
    const resourceLogs = object(item, `resourceLogs[${r}]`);
    const resource = field(resourceLogs, 'resource');
    const attributes = new Attributes();
    if (resource !== undefined) addKeyValues(field(object(resource, 'resource'), 'attributes'), attributes, 0);
    visitor.resource(attributes);
    array(field(resourceLogs, 'scopeLogs'), `resourceLogs[${r}].scopeLogs`).forEach((scope, s) => {
      visitor.scope();
      const where = `resourceLogs[${r}].scopeLogs[${s}]`;
      array(field(object(scope, where), 'logRecords'), `${where}.logRecords`).forEach((record, l) => {
        readLogRecord(object(record, `${where}.logRecords[${l}]`), view);
        visitor.record(view);
      });
    });
  });
}

/** The request as a tree (tests and tools; the receivers walk it). */
export function decodeLogsJson(text: string): LogsRequestWire {
  return collectLogs((visitor) => walkLogsJson(text, visitor));
}

function readLogRecord(record: JsonObject, view: LogRecordView): void {
  const eventName = field(record, 'eventName');
  view.timeUnixNano = nanos(field(record, 'timeUnixNano'), 'timeUnixNano');
  view.observedTimeUnixNano = nanos(field(record, 'observedTimeUnixNano'), 'observedTimeUnixNano');
  view.eventName = typeof eventName === 'string' ? eventName : '';
  view.attributes.clear();
  addKeyValues(field(record, 'attributes'), view.attributes, 0);
  view.body = anyValue(field(record, 'body'), 0);
}

/** Reads `camelName`, falling back to its snake_case spelling. */
function field(source: JsonObject, camelName: string): unknown {
  if (Object.hasOwn(source, camelName)) return source[camelName];
  const snake = camelName.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
  return Object.hasOwn(source, snake) ? source[snake] : undefined;
}

function object(value: unknown, where: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OtlpDecodeError(`${where} must be an object`);
  }
  return value as JsonObject;
}

function array(value: unknown, where: string): readonly unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new OtlpDecodeError(`${where} must be an array`);
  return value;
}

function nanos(value: unknown, where: string): bigint {
  if (value === undefined || value === null || value === '') return 0n;
  if ((typeof value === 'string' && /^\d{1,20}$/.test(value)) || (typeof value === 'number' && Number.isFinite(value))) {
    const result = BigInt(typeof value === 'number' ? Math.trunc(value) : value);
    if (result >= 0n && result < 1n << 64n) return result;
  }
  throw new OtlpDecodeError(`${where} must be an unsigned 64-bit integer, got ${JSON.stringify(value)}`);
}

function addKeyValues(list: unknown, into: PairSink, depth: number): void {
  for (const entry of array(list, 'attributes')) {
    const { key, value } = object(entry, 'attribute') as { key?: unknown; value?: unknown };
    if (typeof key !== 'string') throw new OtlpDecodeError('attribute key must be a string');
    into.add(key, anyValue(value, depth + 1));
  }
}

function keyValues(list: unknown, depth: number): KeyValues {
  const result = new KeyValuesBuilder();
  addKeyValues(list, result, depth);
  return result.map;
}

function anyValue(value: unknown, depth: number): AnyValue {
  if (depth > MAX_VALUE_DEPTH) throw new OtlpDecodeError(`value nested deeper than ${MAX_VALUE_DEPTH} levels`);
  if (value === undefined || value === null) return undefined;
  const source = object(value, 'value');
  const text = field(source, 'stringValue');
  if (typeof text === 'string') return text;
  if (text !== undefined) return JSON.stringify(text);
  const bool = field(source, 'boolValue');
  if (bool !== undefined) return bool === true || bool === 'true';
  const int = field(source, 'intValue');
  if (int !== undefined) return integer(int);
  const double = field(source, 'doubleValue');
  if (double !== undefined) return Number(double);
  const list = field(source, 'arrayValue');
  if (list !== undefined) {
    return array(field(object(list, 'arrayValue'), 'values'), 'arrayValue.values').map((item) => anyValue(item, depth + 1));
  }
  const kvlist = field(source, 'kvlistValue');
  if (kvlist !== undefined) return keyValues(field(object(kvlist, 'kvlistValue'), 'values'), depth);
  const bytes = field(source, 'bytesValue');
  if (typeof bytes === 'string') return new Uint8Array(Buffer.from(bytes, 'base64'));
  return undefined;
}

function integer(value: unknown): number | bigint {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d{1,20}$/.test(value)) {
    const big = BigInt(value);
    return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
  }
  throw new OtlpDecodeError(`intValue must be an integer, got ${JSON.stringify(value)}`);
}
