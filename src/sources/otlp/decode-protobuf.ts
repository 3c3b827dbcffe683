// OTLP/protobuf bytes → wire model. Shared by the gRPC receiver (which hands over the raw
// message) and the HTTP receiver (application/x-protobuf).
import type Long from 'long';
import protobuf from 'protobufjs';
import { otlpTypes } from './otlp-proto.ts';
import {
  type AnyValue,
  type KeyValues,
  type LogRecordWire,
  type LogsRequestWire,
  emptyKeyValues,
  OtlpDecodeError,
} from './otlp-wire.ts';
import { decodeUtf8 } from './utf8-text.ts';

/** Bodies nested deeper than this are hostile or broken; no real record needs it. */
export const MAX_VALUE_DEPTH = 64;

// The shapes protobufjs produces for the OTLP messages (camelCase field names, Long for 64 bits).
interface PbKeyValue {
  key: string;
  value?: PbAnyValue | null;
}
interface PbAnyValue {
  value?: 'stringValue' | 'boolValue' | 'intValue' | 'doubleValue' | 'arrayValue' | 'kvlistValue' | 'bytesValue';
  stringValue: string;
  boolValue: boolean;
  intValue: Long | number;
  doubleValue: number;
  arrayValue?: { values: PbAnyValue[] } | null;
  kvlistValue?: { values: PbKeyValue[] } | null;
  bytesValue: Uint8Array;
}
interface PbLogRecord {
  timeUnixNano: Long | number;
  observedTimeUnixNano: Long | number;
  eventName: string;
  attributes: PbKeyValue[];
  body?: PbAnyValue | null;
}
interface PbRequest {
  resourceLogs: {
    resource?: { attributes: PbKeyValue[] } | null;
    scopeLogs: { logRecords: PbLogRecord[] }[];
  }[];
}

/**
 * Reads strings with invalid UTF-8 kept visible (see utf8-text.ts). protobufjs would refuse the
 * whole request (proto3 strings are verified), so one ordinary log with a broken byte would cost
 * every Kalypso record sent with it; here only a record whose own fields are broken is rejected.
 */
class OtlpReader extends protobuf.BufferReader {
  override stringVerify(): string {
    return this.string();
  }

  override string(): string {
    const length = this.uint32();
    const start = this.pos;
    const end = start + length;
    if (end > this.len) throw new RangeError(`index out of range: ${start} + ${length} > ${this.len}`);
    this.pos = end;
    return decodeUtf8(this.buf.subarray(start, end));
  }
}

export function decodeLogsProtobuf(bytes: Uint8Array): LogsRequestWire {
  let message: PbRequest;
  try {
    const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    message = otlpTypes.ExportLogsServiceRequest.decode(new OtlpReader(buffer)) as unknown as PbRequest;
  } catch (error) {
    const reason = (error as Error).message === 'max depth exceeded' ? `nested deeper than ${protobuf.Reader.recursionLimit} message levels` : (error as Error).message;
    throw new OtlpDecodeError(`invalid OTLP protobuf payload: ${reason}`);
  }
  return {
    resourceLogs: message.resourceLogs.map((resourceLogs) => ({
      resourceAttributes: keyValues(resourceLogs.resource?.attributes ?? [], 0),
      scopeLogs: resourceLogs.scopeLogs.map((scopeLogs) => ({
        logRecords: scopeLogs.logRecords.map(logRecord),
      })),
    })),
  };
}

function logRecord(record: PbLogRecord): LogRecordWire {
  return {
    timeUnixNano: unsigned64(record.timeUnixNano),
    observedTimeUnixNano: unsigned64(record.observedTimeUnixNano),
    eventName: record.eventName,
    attributes: keyValues(record.attributes, 0),
    body: anyValue(record.body, 0),
  };
}

function keyValues(list: readonly PbKeyValue[], depth: number): KeyValues {
  const result = emptyKeyValues();
  for (const { key, value } of list) result[key] = anyValue(value, depth + 1);
  return result;
}

function anyValue(value: PbAnyValue | null | undefined, depth: number): AnyValue {
  if (depth > MAX_VALUE_DEPTH) throw new OtlpDecodeError(`value nested deeper than ${MAX_VALUE_DEPTH} levels`);
  switch (value?.value) {
    case 'stringValue':
      return value.stringValue;
    case 'boolValue':
      return value.boolValue;
    case 'intValue':
      return signed64(value.intValue);
    case 'doubleValue':
      return value.doubleValue;
    case 'bytesValue':
      return value.bytesValue;
    case 'arrayValue':
      return (value.arrayValue?.values ?? []).map((item) => anyValue(item, depth + 1));
    case 'kvlistValue':
      return keyValues(value.kvlistValue?.values ?? [], depth);
    default:
      return undefined;
  }
}

function unsigned64(value: Long | number): bigint {
  if (typeof value === 'number') return BigInt(Math.max(0, Math.trunc(value)));
  return (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
}

/** int64 attribute values: a number when it is exact, a bigint otherwise. */
function signed64(value: Long | number): number | bigint {
  if (typeof value === 'number') return value;
  const big = BigInt.asIntN(64, (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0));
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}
