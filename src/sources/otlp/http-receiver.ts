// OTLP/HTTP logs receiver: `POST /v1/logs` with protobuf or JSON, optionally gzip-compressed.
// Answers in the request's own encoding, as OTLP/HTTP clients expect.
import { Hono } from 'hono';
import type { Logger } from '../../log/logger.ts';
import { bearerTokenMatches } from '../../security/bearer-token.ts';
import { decodeLogsJson } from './decode-json.ts';
import { decodeLogsProtobuf } from './decode-protobuf.ts';
import type { LogsExport } from './logs-export.ts';
import { otlpTypes } from './otlp-proto.ts';
import { BodyEncodingError, BodyTooLargeError, readBody, SUPPORTED_ENCODINGS } from './read-body.ts';
import { decodeUtf8 } from './utf8-text.ts';

export interface HttpReceiverOptions {
  readonly maxBodyBytes: number;
  readonly tokens: readonly string[] | undefined;
}

type Encoding = 'protobuf' | 'json';

const CONTENT_TYPES: Record<Encoding, string> = { protobuf: 'application/x-protobuf', json: 'application/json' };

// gRPC status codes used in OTLP/HTTP error bodies (google.rpc.Status).
const INVALID_ARGUMENT = 3;
const RESOURCE_EXHAUSTED = 8;
const UNAVAILABLE = 14;
const UNAUTHENTICATED = 16;

export function createOtlpHttpApp(logsExport: LogsExport, options: HttpReceiverOptions, log: Logger): Hono {
  const app = new Hono();

  app.post('/v1/logs', async (c) => {
    const mediaType = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const encoding: Encoding | undefined =
      mediaType === 'application/x-protobuf' ? 'protobuf' : mediaType === 'application/json' ? 'json' : undefined;
    if (encoding === undefined) {
      return c.text(`unsupported content type ${JSON.stringify(mediaType)}: use application/x-protobuf or application/json`, 415);
    }
    const reply = (status: 200 | 400 | 401 | 413 | 503, body: Uint8Array, headers: Record<string, string> = {}): Response =>
      new Response(body, { status, headers: { 'content-type': CONTENT_TYPES[encoding], ...headers } });
    const errorReply = (status: 400 | 401 | 413 | 503, code: number, message: string, headers?: Record<string, string>): Response =>
      reply(status, encodeStatus(encoding, code, message), headers);

    if (options.tokens !== undefined && !bearerTokenMatches(c.req.header('authorization'), options.tokens)) {
      return errorReply(401, UNAUTHENTICATED, 'missing or wrong bearer token');
    }
    const contentEncoding = (c.req.header('content-encoding') ?? 'identity').trim().toLowerCase();
    if (!(SUPPORTED_ENCODINGS as readonly string[]).includes(contentEncoding)) {
      return c.text(`unsupported content encoding ${JSON.stringify(contentEncoding)}: use gzip or none`, 415);
    }
    const declaredLength = Number(c.req.header('content-length') ?? '0');
    if (declaredLength > options.maxBodyBytes) {
      return errorReply(413, RESOURCE_EXHAUSTED, `request body exceeds ${options.maxBodyBytes} bytes`);
    }

    // Its size known and nothing to inflate, a request the hub cannot take now is answered
    // before its body is read: under a flood, refusals stay quick and cost no memory.
    let outcome = contentEncoding === 'identity' && declaredLength > 0 ? logsExport.refusalFor('http', { bytes: declaredLength, encoding }) : undefined;
    if (outcome === undefined) {
      let body: Buffer;
      try {
        body = await readBody(c.req.raw.body, contentEncoding, options.maxBodyBytes);
      } catch (error) {
        if (error instanceof BodyTooLargeError) return errorReply(413, RESOURCE_EXHAUSTED, error.message);
        if (error instanceof BodyEncodingError) return errorReply(400, INVALID_ARGUMENT, error.message);
        throw error;
      }
      try {
        outcome = await logsExport.export('http', { bytes: body.length, encoding }, () =>
          encoding === 'protobuf' ? decodeLogsProtobuf(body) : decodeLogsJson(decodeUtf8(body)),
        );
      } catch (error) {
        log.error({ err: error }, 'OTLP/HTTP export failed');
        outcome = { kind: 'unavailable', retryAfterSeconds: 5, message: 'internal error; retry later' };
      }
    }
    switch (outcome.kind) {
      case 'ok':
        return reply(200, encodeResponse(encoding, outcome.rejected, outcome.errorMessage));
      case 'invalid':
        return errorReply(400, INVALID_ARGUMENT, outcome.message);
      case 'too-large':
        return errorReply(413, RESOURCE_EXHAUSTED, outcome.message);
      case 'unavailable':
        return errorReply(503, UNAVAILABLE, outcome.message, { 'retry-after': String(outcome.retryAfterSeconds) });
    }
  });

  return app;
}

function encodeResponse(encoding: Encoding, rejected: number, errorMessage: string): Uint8Array {
  if (encoding === 'json') {
    // int64 is a decimal string in OTLP/JSON.
    const body = rejected > 0 ? { partialSuccess: { rejectedLogRecords: String(rejected), errorMessage } } : {};
    return Buffer.from(JSON.stringify(body));
  }
  const message = rejected > 0 ? { partialSuccess: { rejectedLogRecords: rejected, errorMessage } } : {};
  return otlpTypes.ExportLogsServiceResponse.encode(message).finish();
}

function encodeStatus(encoding: Encoding, code: number, message: string): Uint8Array {
  if (encoding === 'json') return Buffer.from(JSON.stringify({ code, message }));
  return otlpTypes.Status.encode({ code, message }).finish();
}
