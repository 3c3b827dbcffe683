// Raw OTLP exporters that retry the way an OpenTelemetry Collector does: on UNAVAILABLE / 503
// after the server's RetryInfo / Retry-After, on connection failures and timeouts after a short
// backoff, until the batch is acknowledged. Every answer is recorded, so that a test can prove
// which statuses the hub gave during a fault (and that none was a permanent error).
//
// Waits are the server's suggestion scaled down (`timeScale`): the hub asks for 1–20 s, a test
// cannot afford that many times over, and the ratio between suggestions is what matters.
import * as grpc from '@grpc/grpc-js';
import { otlpTypes } from '../../src/sources/otlp/otlp-proto.ts';

/** What one attempt got back. */
export type AnswerKind =
  | 'ok'
  /** gRPC UNAVAILABLE carrying google.rpc.RetryInfo: the hub's "retry later". */
  | 'unavailable+retry-info'
  /** HTTP 503 with a Retry-After header: the hub's "retry later". */
  | '503+retry-after'
  /** No answer from the hub: refused, reset, or cut off (the hub is down or was killed). */
  | 'connection-failed'
  /** The client's own deadline passed before an answer. */
  | 'client-timeout'
  /** gRPC CANCELLED: the server cut the call off (a hub's shutdown deadline); collectors retry it. */
  | 'cancelled'
  /** Anything else, e.g. `grpc-13`, `http-500`, `grpc-14-without-retry-info`: never acceptable. */
  | `grpc-${string}`
  | `http-${string}`;

export interface Attempt {
  readonly kind: AnswerKind;
  readonly ms: number;
  readonly detail: string;
}

export class AnswerLog {
  readonly attempts: Attempt[] = [];

  record(attempt: Attempt): void {
    this.attempts.push(attempt);
  }

  counts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const { kind } of this.attempts) counts[kind] = (counts[kind] ?? 0) + 1;
    return counts;
  }

  /** Attempts whose kind is not in `allowed`, with their details (for a readable failure). */
  outside(allowed: readonly AnswerKind[]): Attempt[] {
    return this.attempts.filter((attempt) => !allowed.includes(attempt.kind));
  }
}

export interface RetryOptions {
  /** Factor applied to the server's suggested wait. */
  readonly timeScale?: number;
  /** Per-attempt deadline (the collector's `timeout`). */
  readonly attemptTimeoutMs?: number;
  /** Give up (throw) after this long: a test must not hang forever. */
  readonly giveUpAfterMs?: number;
}

export interface RetryingExporter {
  /** Sends one batch until it is acknowledged; resolves with the number of attempts. */
  send(body: Buffer): Promise<number>;
  close(): void;
}

interface Outcome {
  readonly kind: AnswerKind;
  readonly detail: string;
  /** The server's suggested wait in seconds, when it gave one. */
  readonly retryAfterSeconds?: number;
}

function retrying(log: AnswerLog, options: RetryOptions, attempt: (body: Buffer, timeoutMs: number) => Promise<Outcome>): RetryingExporter['send'] {
  const timeScale = options.timeScale ?? 0.1;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? 15_000;
  const giveUpAfterMs = options.giveUpAfterMs ?? 60_000;
  return async (body) => {
    const started = Date.now();
    let backoffMs = 50;
    for (let attempts = 1; ; attempts += 1) {
      const before = Date.now();
      const outcome = await attempt(body, attemptTimeoutMs);
      log.record({ kind: outcome.kind, ms: Date.now() - before, detail: outcome.detail });
      if (outcome.kind === 'ok') return attempts;
      if (Date.now() - started > giveUpAfterMs) {
        throw new Error(`batch not acknowledged after ${attempts} attempts; last: ${outcome.kind} ${outcome.detail}`);
      }
      // Jitter, as the collector's exponential backoff has, so that retries do not arrive in lockstep.
      const jitter = 0.5 + Math.random();
      const waitMs =
        outcome.retryAfterSeconds !== undefined ? outcome.retryAfterSeconds * 1_000 * timeScale * jitter : backoffMs * jitter;
      backoffMs = Math.min(backoffMs * 2, 1_000);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  };
}

/** Decodes the RetryInfo delay from a gRPC error's `grpc-status-details-bin`, if there is one. */
export function retryInfoSeconds(error: grpc.ServiceError): number | undefined {
  const details = error.metadata?.get('grpc-status-details-bin')[0];
  if (!(details instanceof Buffer)) return undefined;
  const status = otlpTypes.Status.decode(details) as unknown as { details: { typeUrl: string; value: Uint8Array }[] };
  const info = status.details.find((detail) => detail.typeUrl === 'type.googleapis.com/google.rpc.RetryInfo');
  if (info === undefined) return undefined;
  const { retryDelay } = otlpTypes.RetryInfo.toObject(otlpTypes.RetryInfo.decode(info.value), { longs: Number, defaults: true }) as {
    retryDelay?: { seconds: number; nanos: number };
  };
  return (retryDelay?.seconds ?? 0) + (retryDelay?.nanos ?? 0) / 1e9;
}

/**
 * One long-lived gRPC channel, as a collector keeps; it reconnects by itself (quickly, so that
 * a restarted hub is found within a test's time).
 */
export function grpcRetryingExporter(port: number, log: AnswerLog, options: RetryOptions = {}): RetryingExporter {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    'grpc.initial_reconnect_backoff_ms': 50,
    'grpc.max_reconnect_backoff_ms': 500,
    'grpc.max_send_message_length': 64 * 1024 * 1024,
  });
  const attempt = (body: Buffer, timeoutMs: number): Promise<Outcome> =>
    new Promise((resolve) => {
      client.makeUnaryRequest(
        '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
        (value: Buffer) => value,
        (value: Buffer) => value,
        body,
        new grpc.Metadata(),
        { deadline: Date.now() + timeoutMs },
        (error) => resolve(grpcOutcome(error)),
      );
    });
  return { send: retrying(log, options, attempt), close: () => client.close() };
}

function grpcOutcome(error: grpc.ServiceError | null): Outcome {
  if (error === null) return { kind: 'ok', detail: '' };
  if (error.code === grpc.status.DEADLINE_EXCEEDED) return { kind: 'client-timeout', detail: error.details };
  if (error.code === grpc.status.CANCELLED) return { kind: 'cancelled', detail: error.details };
  if (error.code === grpc.status.UNAVAILABLE) {
    const seconds = retryInfoSeconds(error);
    if (seconds !== undefined) return { kind: 'unavailable+retry-info', detail: error.details, retryAfterSeconds: seconds };
    // grpc-js reports a connection it could not make or lost as UNAVAILABLE without details
    // from the server; the hub's own UNAVAILABLE always carries RetryInfo.
    if (error.metadata.get('grpc-status-details-bin').length === 0 && isTransportFailure(error.details)) {
      return { kind: 'connection-failed', detail: error.details };
    }
    return { kind: 'grpc-14-without-retry-info', detail: error.details };
  }
  return { kind: `grpc-${error.code}`, detail: error.details };
}

function isTransportFailure(details: string): boolean {
  return /No connection established|Connection dropped|ECONNREFUSED|ECONNRESET|read ECONNRESET|Call cancelled|Received RST_STREAM|GOAWAY|connection closed|Connection closed|Stream refused|write EPIPE|Server shut down|socket hang up/i.test(
    details,
  );
}

/** OTLP/HTTP protobuf over fetch's keep-alive connection pool. */
export function httpRetryingExporter(port: number, log: AnswerLog, options: RetryOptions = {}): RetryingExporter {
  const attempt = async (body: Buffer, timeoutMs: number): Promise<Outcome> => {
    let response: Response;
    try {
      response = await fetch(`http://127.0.0.1:${port}/v1/logs`, {
        method: 'POST',
        body: new Uint8Array(body),
        headers: { 'content-type': 'application/x-protobuf' },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') return { kind: 'client-timeout', detail: (error as Error).message };
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      return { kind: 'connection-failed', detail: `${(error as Error).message}: ${cause?.code ?? cause?.message ?? ''}` };
    }
    let text: string;
    try {
      text = Buffer.from(await response.arrayBuffer()).toString('latin1');
    } catch (error) {
      // Headers arrived, then the connection was cut (the hub was killed mid-answer).
      return { kind: 'connection-failed', detail: `body cut off: ${(error as Error).message}` };
    }
    if (response.status === 200) return { kind: 'ok', detail: '' };
    const retryAfter = response.headers.get('retry-after');
    if (response.status === 503 && retryAfter !== null && /^\d+$/.test(retryAfter)) {
      return { kind: '503+retry-after', detail: text, retryAfterSeconds: Number(retryAfter) };
    }
    return { kind: `http-${response.status}${retryAfter === null ? '' : `-retry-after-${retryAfter}`}`, detail: text };
  };
  return { send: retrying(log, options, attempt), close: () => undefined };
}
