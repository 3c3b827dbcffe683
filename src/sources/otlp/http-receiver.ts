// OTLP/HTTP logs receiver: `POST /v1/logs` with protobuf or JSON, optionally gzip-compressed. A
// chain of small steps, each answering for itself: the encoding first (every later answer is
// written in it), then the token, the content encoding, the declared size, and the export.
import type { Context, MiddlewareHandler } from 'hono';
import { Hono } from 'hono';
import type { Logger } from '../../log/logger.ts';
import { getConnInfo } from '@hono/node-server/conninfo';
import { dataHeaders } from '../../security/security-headers.ts';
import { encodingFor, mediaTypeOf, type OtlpHttpEncoding } from './http-encodings.ts';
import type { ExportOutcome, LogsExport } from './logs-export.ts';
import type { IngestGate } from './otlp-access.ts';
import { RETRY_LATER_SECONDS } from '../../store/retry-policy.ts';
import { BodyEncodingError, BodyTooLargeError, readBody, SUPPORTED_ENCODINGS } from './read-body.ts';

export interface HttpReceiverOptions {
  readonly maxBodyBytes: number;
  /** Who may export; undefined: everyone. */
  readonly gate: IngestGate | undefined;
  /** Whether the port serves TLS (then HSTS is sent). */
  readonly tls: boolean;
}

type OtlpHttp = {
  Variables: {
    encoding: OtlpHttpEncoding;
    contentEncoding: string;
    declaredBytes: number;
    /** The workspaces the sender's credential may send reports of; unset for every one. */
    workspaces: readonly string[] | undefined;
  };
};
type OtlpContext = Context<OtlpHttp>;
type Step = MiddlewareHandler<OtlpHttp>;

// gRPC status codes used in OTLP/HTTP error bodies (google.rpc.Status).
const INVALID_ARGUMENT = 3;
const RESOURCE_EXHAUSTED = 8;
const UNAVAILABLE = 14;
const UNAUTHENTICATED = 16;
const PERMISSION_DENIED = 7;

type ErrorStatus = 400 | 401 | 403 | 413 | 503;

function reply(c: OtlpContext, status: 200 | ErrorStatus, body: Uint8Array, headers: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { 'content-type': c.var.encoding.contentType, ...headers } });
}

function errorReply(c: OtlpContext, status: ErrorStatus, code: number, message: string, headers?: Record<string, string>): Response {
  return reply(c, status, c.var.encoding.status(code, message), headers);
}

/** An export's outcome as OTLP/HTTP states it. */
function answer(c: OtlpContext, outcome: ExportOutcome): Response {
  switch (outcome.kind) {
    case 'ok':
      return reply(c, 200, c.var.encoding.response(outcome.rejected, outcome.errorMessage));
    case 'invalid':
      return errorReply(c, 400, INVALID_ARGUMENT, outcome.message);
    case 'too-large':
      return errorReply(c, 413, RESOURCE_EXHAUSTED, outcome.message);
    case 'unavailable':
      return errorReply(c, 503, UNAVAILABLE, outcome.message, { 'retry-after': String(outcome.retryAfterSeconds) });
  }
}

/** protobuf or JSON, from `content-type`; anything else is a 415 in plain text (no encoding to answer in). */
const negotiateEncoding: Step = async (c, next) => {
  const mediaType = mediaTypeOf(c.req.header('content-type'));
  const encoding = encodingFor(mediaType);
  if (encoding === undefined) {
    return c.text(`unsupported content type ${JSON.stringify(mediaType)}: use application/x-protobuf or application/json`, 415);
  }
  c.set('encoding', encoding);
  await next();
  return undefined;
};

const acceptContentEncoding: Step = async (c, next) => {
  const contentEncoding = (c.req.header('content-encoding') ?? 'identity').trim().toLowerCase();
  if (!(SUPPORTED_ENCODINGS as readonly string[]).includes(contentEncoding)) {
    return c.text(`unsupported content encoding ${JSON.stringify(contentEncoding)}: use gzip or none`, 415);
  }
  c.set('contentEncoding', contentEncoding);
  await next();
  return undefined;
};

/** A body declared larger than the limit is refused before a byte of it is read. */
const limitDeclaredSize =
  (maxBodyBytes: number): Step =>
  async (c, next) => {
    const declaredBytes = Number(c.req.header('content-length') ?? '0');
    if (declaredBytes > maxBodyBytes) return errorReply(c, 413, RESOURCE_EXHAUSTED, `request body exceeds ${maxBodyBytes} bytes`);
    c.set('declaredBytes', declaredBytes);
    await next();
    return undefined;
  };

/**
 * Its size known and nothing to inflate, a request the hub cannot take now is answered before its
 * body is read: under a flood, refusals stay quick and cost no memory.
 */
const admitBySize =
  (logsExport: LogsExport): Step =>
  async (c, next) => {
    const bytes = c.var.declaredBytes;
    const refusal = c.var.contentEncoding === 'identity' && bytes > 0 ? logsExport.refusalFor('http', { bytes, encoding: c.var.encoding.name }) : undefined;
    if (refusal !== undefined) return answer(c, refusal);
    await next();
    return undefined;
  };

const exportLogs =
  (logsExport: LogsExport, maxBodyBytes: number, log: Logger) =>
  async (c: OtlpContext): Promise<Response> => {
    const { encoding } = c.var;
    let body: Buffer;
    try {
      body = await readBody(c.req.raw.body, c.var.contentEncoding, maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyTooLargeError) return errorReply(c, 413, RESOURCE_EXHAUSTED, error.message);
      if (error instanceof BodyEncodingError) return errorReply(c, 400, INVALID_ARGUMENT, error.message);
      throw error;
    }
    try {
      const walk = (visitor: Parameters<typeof encoding.walk>[1]): void => encoding.walk(body, visitor);
      return answer(c, await logsExport.export('http', { bytes: body.length, encoding: encoding.name }, walk, c.var.workspaces));
    } catch (error) {
      log.error({ err: error }, 'OTLP/HTTP export failed');
      return answer(c, { kind: 'unavailable', retryAfterSeconds: RETRY_LATER_SECONDS, message: 'internal error; retry later' });
    }
  };

/** The token step: 401 without a good credential, 403 with one that lacks the ingest role. */
function admitExport(gate: IngestGate): Step {
  return async (c, next) => {
    const verdict = await gate(c.req.header('authorization'), { address: socketAddress(c), forwardedFor: c.req.header('x-forwarded-for') }, 'http');
    if (verdict.kind !== 'admitted') {
      return verdict.kind === 'forbidden' ? errorReply(c, 403, PERMISSION_DENIED, verdict.message) : errorReply(c, 401, UNAUTHENTICATED, verdict.message);
    }
    c.set('workspaces', verdict.workspaces);
    await next();
    return undefined;
  };
}

function socketAddress(c: OtlpContext): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'local';
  }
}

export function createOtlpHttpApp(logsExport: LogsExport, options: HttpReceiverOptions, log: Logger): Hono<OtlpHttp> {
  const app = new Hono<OtlpHttp>();
  app.use(dataHeaders(options.tls));
  const authenticate: Step[] = options.gate === undefined ? [] : [admitExport(options.gate)];
  app.post(
    '/v1/logs',
    negotiateEncoding,
    ...authenticate,
    acceptContentEncoding,
    limitDeclaredSize(options.maxBodyBytes),
    admitBySize(logsExport),
    exportLogs(logsExport, options.maxBodyBytes, log),
  );
  return app;
}
