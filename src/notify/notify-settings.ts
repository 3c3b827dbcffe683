// Telling people and systems: where the hub is reached (for every link it sends out), where it
// reports to (the notifications file), and the numbers that pace judging and sending.
import { optionalText } from '../config/setting-parsers.ts';
import type { Setting } from '../config/setting.ts';
import { ok, refused, type Result } from '../model/result.ts';

const publicUrl = (value: string): Result<string | undefined> => {
  if (value.trim() === '') return ok(undefined);
  try {
    const url = new URL(value.trim());
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return refused('must be an http:// or https:// URL');
    return ok(url.toString().replace(/\/+$/, ''));
  } catch {
    return refused('must be an http:// or https:// URL');
  }
};

export const NOTIFY_SETTINGS = {
  publicUrl: {
    flag: 'public-url',
    group: 'notifications',
    env: ['KALYPSO_PUBLIC_URL'],
    default: undefined,
    description:
      'The address people reach the hub at (e.g. `https://kalypso.example.com`), used in every link the hub sends out: commit statuses, events, alerts. Needed when `--notifications` is set.',
    parse: publicUrl,
    shownDefault: '(none)',
  } satisfies Setting<string | undefined>,
  notifications: {
    flag: 'notifications',
    group: 'notifications',
    env: ['KALYPSO_NOTIFICATIONS'],
    default: undefined,
    description:
      'YAML/JSON file of where the hub reports to: `commitStatus` providers (GitHub, GitLab, Azure DevOps) and `webhooks` (CloudEvents, signed). See docs/notifications.md.',
    parse: optionalText,
    shownDefault: '(none)',
  } satisfies Setting<string | undefined>,
} as const;

export const NOTIFY_TUNING = {
  /** How often the notifier judges the rollouts whose endpoints changed (and those turning stale). */
  judgeEveryMs: 1_000,
  /** How often the sender looks for messages due (it is also woken when this hub queues one). */
  sendEveryMs: 500,
  /** Progress of one commit and context goes out at most this often; a settled state at once. */
  progressIntervalMs: 2_000,
  /** Messages one sender claims at a time. */
  claimBatch: 20,
  /** How long a claimed message is this hub's; a hub that dies mid-send gives it up after this. */
  claimLeaseMs: 60_000,
  /** The first retry after a failure without a Retry-After; doubled each time, up to maxBackoffMs. */
  firstBackoffMs: 1_000,
  maxBackoffMs: 10 * 60_000,
  /** A rate limit whose response names no time to wait (GitHub's secondary limits): wait at least this. */
  rateLimitedBackoffMs: 60_000,
  /** How long a request to a provider may take. */
  requestTimeoutMs: 20_000,
  /** Sent messages are kept this long as the record of delivery, then deleted. */
  keepSentMs: 7 * 86_400_000,
  /**
   * Drift is announced once it has lasted this long: every merge puts a whole environment off its
   * desired commit until the clusters apply it, which is a rollout, not news.
   */
  driftEventAfterMs: 5 * 60_000,
  /** How often drift and hosts are compared with what was last announced (each look reads every drift item and host). */
  fleetWatchEveryMs: 5_000,
  /** A rollout with a silent subscriber is judged again this often (a silent one that speaks again changes nothing else). */
  staleRecheckMs: 30_000,
  /** A subject superseded by a newer commit and still unsettled is given up after this. */
  watchUnsettledMs: 7 * 86_400_000,
} as const;

/** The tunables as numbers (tests and benchmarks pass their own). */
export type NotifyTuning = { readonly [K in keyof typeof NOTIFY_TUNING]: number };
