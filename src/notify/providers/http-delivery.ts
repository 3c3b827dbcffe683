// The one HTTP path every channel sends through: a request with a deadline, and what an answer
// means — 2xx delivered; 408, 429 and 5xx (and no answer at all) worth another try, when the
// receiver says (Retry-After); any other 4xx refused for good, with the receiver's own words.
// Retries themselves are the outbox's (durable, shared by every hub), never made here in memory.
import type { SendOutcome } from '../messages.ts';

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

export interface HttpRequest {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** The answer, or why there was none (refused connection, timeout, TLS…). */
export async function httpRequest(request: HttpRequest, timeoutMs: number, signal: AbortSignal): Promise<HttpAnswer | { readonly error: string }> {
  try {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
      redirect: 'manual',
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { error: cause?.code ?? cause?.message ?? (error as Error).message };
  }
}

/** Milliseconds the receiver asked to wait (Retry-After: seconds or an HTTP date), if it did. */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1_000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The receiver's own words: a JSON `message` or `error` (GitHub, GitLab, Azure DevOps), else the start of the text. */
export function receiverMessage(answer: HttpAnswer): string {
  let said: unknown;
  try {
    const body = JSON.parse(answer.text) as Record<string, unknown>;
    said = body.message ?? body.error_description ?? body.error ?? body.value;
  } catch {
    said = answer.text;
  }
  const text = (typeof said === 'string' ? said : JSON.stringify(said ?? '')).replace(/\s+/g, ' ').trim().slice(0, 300);
  return `HTTP ${answer.status}${text === '' ? '' : `: ${text}`}`;
}

/** What an answer means when nothing provider-specific applies. */
export function genericOutcome(answer: HttpAnswer | { readonly error: string }, now: number): SendOutcome {
  if ('error' in answer) return { kind: 'retry', reason: `no answer: ${answer.error}` };
  if (answer.status >= 200 && answer.status < 300) return { kind: 'sent' };
  const after = retryAfterMs(answer.headers, now);
  if (answer.status === 429) return { kind: 'retry', reason: receiverMessage(answer), rateLimited: true, ...(after === undefined ? {} : { afterMs: after }) };
  if (answer.status === 408 || answer.status >= 500) return { kind: 'retry', reason: receiverMessage(answer), ...(after === undefined ? {} : { afterMs: after }) };
  return { kind: 'refused', reason: receiverMessage(answer) };
}
