// The two encodings of OTLP/HTTP, behind one interface: how a request body is decoded and how the
// answers are written. The receiver answers in the request's own encoding, as OTLP/HTTP clients
// expect (https://opentelemetry.io/docs/specs/otlp/#otlphttp-response).
import type { WireEncoding } from './decode-memory.ts';
import { walkLogsJson } from './decode-json.ts';
import { walkLogsProtobuf } from './decode-protobuf.ts';
import { otlpTypes } from './otlp-proto.ts';
import type { LogsVisitor } from '../../wire/otlp-logs.ts';
import { decodeUtf8 } from './utf8-text.ts';

export interface OtlpHttpEncoding {
  readonly name: WireEncoding;
  readonly contentType: string;
  /** Walks the body's records (see wire/otlp-logs.ts). */
  walk(body: Buffer, visitor: LogsVisitor): void;
  /** ExportLogsServiceResponse: empty, or a partial success naming the rejected records. */
  response(rejected: number, errorMessage: string): Uint8Array;
  /** google.rpc.Status, the body of every error answer. */
  status(code: number, message: string): Uint8Array;
}

const partialSuccess = <T>(rejected: number, errorMessage: string, count: T) =>
  rejected > 0 ? { partialSuccess: { rejectedLogRecords: count, errorMessage } } : {};

const PROTOBUF: OtlpHttpEncoding = {
  name: 'protobuf',
  contentType: 'application/x-protobuf',
  walk: (body, visitor) => walkLogsProtobuf(body, visitor),
  response: (rejected, errorMessage) => otlpTypes.ExportLogsServiceResponse.encode(partialSuccess(rejected, errorMessage, rejected)).finish(),
  status: (code, message) => otlpTypes.Status.encode({ code, message }).finish(),
};

const JSON_ENCODING: OtlpHttpEncoding = {
  name: 'json',
  contentType: 'application/json',
  walk: (body, visitor) => walkLogsJson(decodeUtf8(body), visitor),
  // int64 is a decimal string in OTLP/JSON.
  response: (rejected, errorMessage) => Buffer.from(JSON.stringify(partialSuccess(rejected, errorMessage, String(rejected)))),
  status: (code, message) => Buffer.from(JSON.stringify({ code, message })),
};

const BY_MEDIA_TYPE: ReadonlyMap<string, OtlpHttpEncoding> = new Map([PROTOBUF, JSON_ENCODING].map((encoding) => [encoding.contentType, encoding]));

/** The media type of a `content-type` header (parameters and case aside). */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** The encoding a media type names, if OTLP/HTTP has one. */
export function encodingFor(mediaType: string): OtlpHttpEncoding | undefined {
  return BY_MEDIA_TYPE.get(mediaType);
}
