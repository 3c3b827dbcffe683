// One GET to the hub's API for the command-line tools. Getting no answer — or one cut off, or one
// that is not JSON — is an expected outcome, returned as a value that says where and why, so that
// a command can retry while its wait lasts and otherwise exit with its "could not ask" code.
import { describeFetchFailure } from '../http/fetch-failure.ts';

export type Asked =
  | { readonly kind: 'answer'; readonly url: string; readonly ok: boolean; readonly status: number; readonly statusText: string; readonly body: unknown }
  | { readonly kind: 'unreachable'; readonly reason: string };

/** `body` is the parsed JSON, undefined when the answer was not JSON. */
export async function askHub(url: string, token: string | undefined, timeoutMs: number): Promise<Asked> {
  try {
    const response = await fetch(url, {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    return { kind: 'answer', url, ok: response.ok, status: response.status, statusText: response.statusText, body: parseJson(text) };
  } catch (error) {
    return { kind: 'unreachable', reason: describeFetchFailure(url, error, timeoutMs) };
  }
}

export function isHttpUrl(text: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(text).protocol);
  } catch {
    return false;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
