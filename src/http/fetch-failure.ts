// Why a request got no answer, in words an operator can act on. Node's fetch throws
// `TypeError: fetch failed` and keeps the reason in `cause`: a system error (ECONNREFUSED,
// ENOTFOUND), a TLS error (a self-signed certificate), or an AggregateError with one error per
// address tried (localhost as ::1 and 127.0.0.1) — its own message is empty. "fetch failed" alone
// says neither where nor why.
import { formatDuration } from '../config/units.ts';

/**
 * "cannot reach http://host:port/path: connect ECONNREFUSED 127.0.0.1:4318", or for a request
 * given up by its timeout signal "no answer from http://host:port/path within 30s".
 */
export function describeFetchFailure(url: string | URL, error: unknown, timeoutMs?: number): string {
  const shown = shownUrl(url);
  if (error instanceof Error && error.name === 'TimeoutError') {
    return `no answer from ${shown}${timeoutMs === undefined ? '' : ` within ${formatDuration(timeoutMs)}`}`;
  }
  return `cannot reach ${shown}: ${[...new Set(rootCauses(error))].join('; ')}`;
}

/** The URL without credentials, query or fragment: where, not what was asked. */
export function shownUrl(url: string | URL): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return String(url);
  }
}

/** The innermost errors: the cause of each cause, every error of an AggregateError. */
function rootCauses(error: unknown, depth = 0): string[] {
  if (depth < 10 && error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.flatMap((inner: unknown) => rootCauses(inner, depth + 1));
  }
  if (depth < 10 && error instanceof Error && error.cause !== undefined) return rootCauses(error.cause, depth + 1);
  return [describeError(error)];
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const message = error.message.trim() === '' ? error.name : error.message.trim();
  const code = (error as { code?: unknown }).code;
  // TLS errors name their code only there (DEPTH_ZERO_SELF_SIGNED_CERT, CERT_HAS_EXPIRED).
  return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
}
