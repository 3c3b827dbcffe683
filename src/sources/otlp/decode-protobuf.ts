// OTLP/protobuf bytes → the records of a request, handed to a visitor one by one (see
// wire/otlp-logs.ts). Shared by the gRPC receiver (which hands over the raw message) and the HTTP
// receiver (application/x-protobuf).
//
// The messages are walked field by field. protobufjs' generated decoder built an object per
// message first (every KeyValue, AnyValue and 64-bit Long), which the wire model then copied;
// later the wire model itself was a tree with a dictionary of attributes per record, held until
// the whole request was normalized. Now each record is read into one reused view and normalized
// at once: under ingest, no short-lived objects per record for the garbage collector to chase
// beyond the body and the strings the normalized record keeps.
// Field numbers and wire types are the OTLP .proto files' (kept in ./proto); a field the hub does
// not read, or one of an unexpected wire type, is skipped as protobuf skips unknown fields.
// test/otlp/decode-protobuf-differential.test.ts holds this decoder, and the normalization of
// what it walks, to protobufjs' reading of the same bytes.
import protobuf from 'protobufjs';
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
import { decodeUtf8 } from './utf8-text.ts';

/** Bodies nested deeper than this are hostile or broken; no real record needs it. */
export const MAX_VALUE_DEPTH = 64;

/** A field's tag as it is written: field number and wire type. */
const tag = (field: number, wireType: 0 | 1 | 2): number => (field << 3) | wireType;
const VARINT = 0;
const FIXED64 = 1;
const BYTES = 2;

/** protobufjs' reader for the primitives (varints, fixed widths, skipping), plus what OTLP needs. */
class OtlpReader extends protobuf.BufferReader {
  readonly #bytes: Buffer;

  constructor(bytes: Buffer) {
    super(bytes);
    this.#bytes = bytes;
  }

  /** The end of the length-delimited field that starts here. */
  end(): number {
    const length = this.uint32();
    const end = this.pos + length;
    if (end > this.len) throw new RangeError(`index out of range: ${this.pos} + ${length} > ${this.len}`);
    return end;
  }

  /** After a message's fields: they must have ended where its length said. */
  finish(end: number): void {
    if (this.pos !== end) throw new RangeError(`a field overruns its message at offset ${this.pos}`);
  }

  /**
   * A string, with invalid UTF-8 kept visible (see utf8-text.ts). protobufjs would refuse the
   * whole request (proto3 strings are verified), so one ordinary log with a broken byte would
   * cost every Kalypso record sent with it; here only a record whose own fields are broken is
   * rejected. ASCII, nearly every string the hub reads, is taken as it is.
   */
  text(): string {
    const end = this.end();
    const start = this.pos;
    this.pos = end;
    const bytes = this.#bytes;
    for (let i = start; i < end; i += 1) if (bytes[i]! >= 0x80) return decodeUtf8(bytes.subarray(start, end));
    return bytes.toString('latin1', start, end);
  }

  /** Unsigned 64 bits (fixed64, little-endian), exact. */
  unsigned64(): bigint {
    const low = this.fixed32();
    const high = this.fixed32();
    return (BigInt(high) << 32n) | BigInt(low);
  }

  /** int64 (a varint, two's complement): a number when it is exact, a bigint otherwise. */
  signed64(): number | bigint {
    const bytes = this.#bytes;
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.len) throw new RangeError(`index out of range: ${this.pos} + 1 > ${this.len}`);
      const byte = bytes[this.pos++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) {
        const signed = BigInt.asIntN(64, value);
        return signed >= MIN_EXACT && signed <= MAX_EXACT ? Number(signed) : signed;
      }
    }
    throw new RangeError('invalid varint encoding');
  }
}

const MIN_EXACT = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

/** Walks an OTLP/protobuf logs request, handing each record to `visitor` as soon as it is read. */
export function walkLogsProtobuf(bytes: Uint8Array, visitor: LogsVisitor): void {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const reader = new OtlpReader(buffer);
  const view = newLogRecordView();
  try {
    while (reader.pos < reader.len) {
      const field = reader.uint32();
      if (field === tag(1, BYTES)) walkResourceLogs(reader, reader.end(), visitor, view);
      else reader.skipType(field & 7);
    }
  } catch (error) {
    if (error instanceof OtlpDecodeError) throw error;
    throw new OtlpDecodeError(`invalid OTLP protobuf payload: ${(error as Error).message}`);
  }
}

/** The request as a tree (tests and tools; the receivers walk it). */
export function decodeLogsProtobuf(bytes: Uint8Array): LogsRequestWire {
  return collectLogs((visitor) => walkLogsProtobuf(bytes, visitor));
}

/**
 * ResourceLogs: 1 resource, 2 scope_logs. The resource is read first, wherever it stands (fields
 * may come in any order), so that its records meet its attributes; the last one written wins.
 */
function walkResourceLogs(reader: OtlpReader, end: number, visitor: LogsVisitor, view: LogRecordView): void {
  const start = reader.pos;
  let resource = new Attributes();
  while (reader.pos < end) {
    const field = reader.uint32();
    if (field === tag(1, BYTES)) resource = readResource(reader, reader.end());
    else reader.skipType(field & 7);
  }
  reader.finish(end);
  visitor.resource(resource);
  reader.pos = start;
  while (reader.pos < end) {
    const field = reader.uint32();
    if (field === tag(2, BYTES)) walkScopeLogs(reader, reader.end(), visitor, view);
    else reader.skipType(field & 7);
  }
}

/** Resource: 1 attributes. */
function readResource(reader: OtlpReader, end: number): Attributes {
  const attributes = new Attributes();
  while (reader.pos < end) {
    const field = reader.uint32();
    if (field === tag(1, BYTES)) readKeyValue(reader, reader.end(), attributes, 0);
    else reader.skipType(field & 7);
  }
  reader.finish(end);
  return attributes;
}

/** ScopeLogs: 2 log_records. */
function walkScopeLogs(reader: OtlpReader, end: number, visitor: LogsVisitor, view: LogRecordView): void {
  visitor.scope();
  while (reader.pos < end) {
    const field = reader.uint32();
    if (field === tag(2, BYTES)) {
      readLogRecord(reader, reader.end(), view);
      visitor.record(view);
    } else reader.skipType(field & 7);
  }
  reader.finish(end);
}

/** LogRecord into `view`: 1 time_unix_nano, 11 observed_time_unix_nano, 12 event_name, 6 attributes, 5 body. */
function readLogRecord(reader: OtlpReader, end: number, view: LogRecordView): void {
  view.timeUnixNano = 0n;
  view.observedTimeUnixNano = 0n;
  view.eventName = '';
  view.body = undefined;
  view.attributes.clear();
  while (reader.pos < end) {
    const field = reader.uint32();
    switch (field) {
      case tag(1, FIXED64):
        view.timeUnixNano = reader.unsigned64();
        break;
      case tag(11, FIXED64):
        view.observedTimeUnixNano = reader.unsigned64();
        break;
      case tag(12, BYTES):
        view.eventName = reader.text();
        break;
      case tag(6, BYTES):
        readKeyValue(reader, reader.end(), view.attributes, 0);
        break;
      case tag(5, BYTES):
        view.body = readAnyValue(reader, reader.end(), 0);
        break;
      default:
        reader.skipType(field & 7);
    }
  }
  reader.finish(end);
}

/** KeyValue (1 key, 2 value) into `into`. */
function readKeyValue(reader: OtlpReader, end: number, into: PairSink, depth: number): void {
  let key = '';
  let value: AnyValue;
  while (reader.pos < end) {
    const field = reader.uint32();
    if (field === tag(1, BYTES)) key = reader.text();
    else if (field === tag(2, BYTES)) value = readAnyValue(reader, reader.end(), depth + 1);
    else reader.skipType(field & 7);
  }
  reader.finish(end);
  into.add(key, value);
}

/**
 * AnyValue, a oneof: 1 string, 2 bool, 3 int, 4 double, 5 array, 6 kvlist, 7 bytes. The last one
 * written wins, as for any oneof; undefined when none is.
 */
function readAnyValue(reader: OtlpReader, end: number, depth: number): AnyValue {
  if (depth > MAX_VALUE_DEPTH) throw new OtlpDecodeError(`value nested deeper than ${MAX_VALUE_DEPTH} levels`);
  let value: AnyValue;
  while (reader.pos < end) {
    const field = reader.uint32();
    switch (field) {
      case tag(1, BYTES):
        value = reader.text();
        break;
      case tag(2, VARINT):
        value = reader.bool();
        break;
      case tag(3, VARINT):
        value = reader.signed64();
        break;
      case tag(4, FIXED64):
        value = reader.double();
        break;
      case tag(5, BYTES):
        value = readArrayValue(reader, reader.end(), depth);
        break;
      case tag(6, BYTES):
        value = readKeyValueList(reader, reader.end(), depth);
        break;
      case tag(7, BYTES):
        value = reader.bytes();
        break;
      default:
        reader.skipType(field & 7);
    }
  }
  reader.finish(end);
  return value;
}

/** ArrayValue: 1 values. */
function readArrayValue(reader: OtlpReader, end: number, depth: number): AnyValue[] {
  const values: AnyValue[] = [];
  while (reader.pos < end) {
    const field = reader.uint32();
    if (field === tag(1, BYTES)) values.push(readAnyValue(reader, reader.end(), depth + 1));
    else reader.skipType(field & 7);
  }
  reader.finish(end);
  return values;
}

/** KeyValueList: 1 values. */
function readKeyValueList(reader: OtlpReader, end: number, depth: number): KeyValues {
  const entries = new KeyValuesBuilder();
  while (reader.pos < end) {
    const field = reader.uint32();
    if (field === tag(1, BYTES)) readKeyValue(reader, reader.end(), entries, depth);
    else reader.skipType(field & 7);
  }
  reader.finish(end);
  return entries.map;
}
