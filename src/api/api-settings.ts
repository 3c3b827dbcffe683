// The query API's settings (its tokens, the longest wait a gate request may ask for), and the
// numbers that bound what one request may ask or wait for.
import { duration, tokens } from '../config/setting-parsers.ts';
import type { Setting } from '../config/setting.ts';
import { formatDuration } from '../config/units.ts';

export const API_SETTINGS = {
  apiToken: {
    flag: 'api-token',
    group: 'security',
    env: ['KALYPSO_API_TOKEN'],
    default: undefined,
    description:
      'When set, `/api/v1` requests must carry `authorization: Bearer <token>` (the web UI asks for it). Comma-separated: several accepted. Health, metrics and the OpenAPI document stay open.',
    parse: tokens,
    shownDefault: '(none)',
    secret: true,
  } satisfies Setting<readonly string[] | undefined>,
  maxWait: {
    flag: 'max-wait',
    group: 'limits',
    env: ['KALYPSO_MAX_WAIT'],
    default: 5 * 60_000,
    description: 'Longest `wait` a rollout-gate request may ask for (longer waits: call again).',
    parse: duration,
    shownDefault: formatDuration(5 * 60_000),
  } satisfies Setting<number>,
} as const;

export const API_TUNING = {
  /** `/readyz` fails when the database does not answer a trivial query within this. */
  readyQueryTimeoutMs: 2_000,
  /** Other hub replicas write too: a waiting gate request also looks again on this interval. */
  gatePollIntervalMs: 1_000,
  /** The delivery window when `since` is not given: the 30 days before `until`. */
  deliveryWindowMs: 30 * 86_400_000,
  /** The longest fix window a delivery request may ask for. */
  maxFixWindowMs: 30 * 86_400_000,
} as const;
