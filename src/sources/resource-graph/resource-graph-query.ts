// Runs one Resource Graph query to the end: pages with $skipToken (1,000 rows a page), paces
// itself by the quota headers every response carries, and rides out throttling (429, with or
// without Retry-After) with backoff — the SDK itself retries a 429 only when Retry-After is set.
import type { ResourceGraphClient, ResourceGraphClientOptionalParams } from '@azure/arm-resourcegraph';
import type { TokenCredential } from '@azure/identity';
import type { Logger } from '../../log/logger.ts';
import { Backoff, sleep } from '../kube/backoff.ts';

export const FLUX_CONFIGURATIONS_QUERY =
  "kubernetesconfigurationresources | where type == 'microsoft.kubernetesconfiguration/fluxconfigurations' | order by id asc";

const PAGE_SIZE = 1_000;
const MAX_THROTTLED_ATTEMPTS = 6;

export interface QueryResult {
  readonly rows: unknown[];
  /** HTTP requests the query took: pages, plus every retry (the SDK's own included). */
  readonly requests: number;
  readonly throttled: number;
}

export interface ResourceGraphQuery {
  queryAll(subscriptions: readonly string[], query: string, signal: AbortSignal): Promise<QueryResult>;
}

export class ThrottledError extends Error {
  override readonly name = 'ThrottledError';
}

/** `hh:mm:ss` (as in x-ms-user-quota-resets-after) → milliseconds. */
export function parseQuotaReset(value: string | undefined): number | undefined {
  const match = /^(\d+):(\d{2}):(\d{2})(?:\.\d+)?$/.exec(value?.trim() ?? '');
  return match === null ? undefined : ((Number(match[1]) * 60 + Number(match[2])) * 60 + Number(match[3])) * 1_000;
}

function retryAfterMs(headers: { get(name: string): string | undefined } | undefined): number | undefined {
  const retryAfter = headers?.get('retry-after');
  if (retryAfter !== undefined) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds)) return seconds * 1_000;
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, date - Date.now());
  }
  return parseQuotaReset(headers?.get('x-ms-user-quota-resets-after'));
}

/** The Azure SDK is loaded on first use: a hub without Resource Graph sources does not carry it. */
export async function createResourceGraphQuery(credential: TokenCredential, armEndpoint: string, log: Logger): Promise<ResourceGraphQuery> {
  const { ResourceGraphClient } = await import('@azure/arm-resourcegraph');
  const endpoint = armEndpoint.replace(/\/+$/, '');
  const meter: QuotaMeter = { requests: 0, throttled: 0, waitBeforeNextMs: 0 };
  const client = new ResourceGraphClient(credential, {
    endpoint,
    credentials: { scopes: [`${endpoint}/.default`] },
    retryOptions: { maxRetries: 2 },
    additionalPolicies: [{ position: 'perRetry', policy: quotaPolicy(meter) }],
  });
  return {
    queryAll(subscriptions, query, signal) {
      return queryAllPages(client, meter, log, { subscriptions, query, signal });
    },
  };
}

/** Counted and read on every HTTP attempt, including those the SDK retries by itself. */
interface QuotaMeter {
  requests: number;
  throttled: number;
  /** When the quota says the next request would be refused, wait until it resets. */
  waitBeforeNextMs: number;
}

type PipelinePolicy = NonNullable<ResourceGraphClientOptionalParams['additionalPolicies']>[number]['policy'];

/** Counts every attempt and every 429, and reads the quota headers of every answer. */
function quotaPolicy(meter: QuotaMeter): PipelinePolicy {
  return {
    name: 'kalypsoQuotaPolicy',
    async sendRequest(request, next) {
      meter.requests += 1;
      const response = await next(request);
      if (response.status === 429) meter.throttled += 1;
      const remaining = Number(response.headers.get('x-ms-user-quota-remaining'));
      if (response.status === 200 && Number.isFinite(remaining) && remaining <= 1) {
        meter.waitBeforeNextMs = parseQuotaReset(response.headers.get('x-ms-user-quota-resets-after')) ?? 5_000;
      }
      return response;
    },
  };
}

/** Every page of one query, with the requests it took (retries included) and how many were throttled. */
async function queryAllPages(
  client: ResourceGraphClient,
  meter: QuotaMeter,
  log: Logger,
  asked: { subscriptions: readonly string[]; query: string; signal: AbortSignal },
): Promise<QueryResult> {
  const { subscriptions, query, signal } = asked;
  const rows: unknown[] = [];
  const [requestsBefore, throttledBefore] = [meter.requests, meter.throttled];
  const totals = () => ({ requests: meter.requests - requestsBefore, throttled: meter.throttled - throttledBefore });
  let skipToken: string | undefined;
  meter.waitBeforeNextMs = 0;
  const backoff = new Backoff(1_000, 30_000);
  for (let attempt = 0; ; ) {
    await waitForQuotaReset(meter, log, signal);
    if (signal.aborted) throw new Error('poll cancelled');
    try {
      const page = await client.resources(
        { subscriptions: [...subscriptions], query, options: { top: PAGE_SIZE, skipToken, resultFormat: 'objectArray' } },
        { abortSignal: signal },
      );
      rows.push(...(Array.isArray(page.data) ? (page.data as unknown[]) : []));
      attempt = 0;
      backoff.reset();
      if (page.skipToken === undefined || page.skipToken === '') return { rows, ...totals() };
      skipToken = page.skipToken;
    } catch (error) {
      attempt += 1;
      const { status, delay } = retryAfterRefusal(error, attempt, backoff, signal);
      log.warn({ status, attempt, retryInMs: delay }, 'Resource Graph request refused; retrying');
      await sleep(delay, signal);
    }
  }
}

async function waitForQuotaReset(meter: QuotaMeter, log: Logger, signal: AbortSignal): Promise<void> {
  if (meter.waitBeforeNextMs <= 0) return;
  log.info({ waitMs: meter.waitBeforeNextMs }, 'Resource Graph quota nearly used up; waiting for it to reset');
  await sleep(meter.waitBeforeNextMs, signal);
  meter.waitBeforeNextMs = 0;
}

/**
 * How long to wait before asking again after a request failed with `error` (attempt `attempt` in a
 * row); throws what ends the query instead: an error that is not transient, cancellation, or
 * refusal past the last attempt.
 */
function retryAfterRefusal(error: unknown, attempt: number, backoff: Backoff, signal: AbortSignal): { status: number; delay: number } {
  const status = (error as { statusCode?: number }).statusCode;
  const transient = status === 429 || (status !== undefined && status >= 500);
  if (!transient || signal.aborted) throw error;
  if (attempt >= MAX_THROTTLED_ATTEMPTS) {
    throw new ThrottledError(`Resource Graph still refusing after ${attempt} attempts (HTTP ${status})`, { cause: error });
  }
  const headers = (error as { response?: { headers?: { get(name: string): string | undefined } } }).response?.headers;
  return { status, delay: retryAfterMs(headers) ?? backoff.next() };
}
