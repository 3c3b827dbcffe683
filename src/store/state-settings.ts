// The rules of state and history: when a silent reconciler turns stale, the promotion order, how
// long history is kept; and how often the derived tables (summaries, rollouts, history
// partitions) catch up with the writes.
import { FIELD_LIMITS } from '../normalize/field-reader.ts';
import { ok, refused, type Result } from '../model/result.ts';
import { duration } from '../config/setting-parsers.ts';
import type { Setting } from '../config/setting.ts';
import { formatDuration, parseDuration } from '../config/units.ts';

const retention = (text: string): Result<number> => {
  if (text.trim() === '0') return ok(0);
  const value = parseDuration(text);
  return value !== undefined && value >= 86_400_000 ? ok(value) : refused('must be 0 (keep forever) or a duration of at least 1d, such as 400d');
};

// Environment names as the normalizer stores them (trimmed, at most 253 characters), so that a
// name in the setting can match an environment the hub has seen. A duplicate would give one
// environment two places, so it is refused rather than resolved silently.
const environmentOrder = (value: string): Result<readonly string[]> => {
  if (value.trim() === '') return ok([]);
  const names = value.split(',').map((name) => name.trim());
  if (names.includes('')) return refused('must be environment names separated by commas, none empty');
  if (names.some((name) => name.length > FIELD_LIMITS.name)) return refused(`environment names are at most ${FIELD_LIMITS.name} characters`);
  const duplicate = names.find((name, index) => names.indexOf(name) !== index);
  if (duplicate !== undefined) return refused(`environment ${JSON.stringify(duplicate)} is listed twice`);
  return ok(names);
};

export const STATE_SETTINGS = {
  staleAfter: {
    flag: 'stale-after',
    group: 'state',
    env: ['KALYPSO_STALE_AFTER'],
    default: 15 * 60_000,
    description: 'A reconciler whose last report is older than this is stale (never counted as success).',
    parse: duration,
    shownDefault: formatDuration(15 * 60_000),
  } satisfies Setting<number>,
  environmentOrder: {
    flag: 'environment-order',
    group: 'state',
    env: ['KALYPSO_ENVIRONMENT_ORDER'],
    default: [],
    description:
      'Promotion order, comma-separated (e.g. `dev,qa,prod`): these environments come first, in this order; the others follow in the order first seen. Empty: all in the order first seen.',
    parse: environmentOrder,
    shownDefault: '(none)',
  } satisfies Setting<readonly string[]>,
  // Thresholds of the Grafana alert rules (docs/alerts.md), written into the database with
  // stale-after: the rules read them there, as Grafana cannot put its environment into a query.
  rolloutWindow: {
    flag: 'rollout-window',
    group: 'state',
    env: ['KALYPSO_ROLLOUT_WINDOW'],
    default: 30 * 60_000,
    description:
      'A rollout still in progress this long after its assignment is overdue: the Grafana alert "rollout not converged" fires (kalypso_current_rollout.overdue).',
    parse: duration,
    shownDefault: formatDuration(30 * 60_000),
  } satisfies Setting<number>,
  offCommitAfter: {
    flag: 'off-commit-after',
    group: 'state',
    env: ['KALYPSO_OFF_COMMIT_AFTER'],
    default: 60 * 60_000,
    description:
      'A reconciler that reports but runs another commit than its target’s desired rollout for this long: the Grafana alert "reconciler off its desired commit" fires (kalypso_off_desired_commit.over_threshold).',
    parse: duration,
    shownDefault: formatDuration(60 * 60_000),
  } satisfies Setting<number>,
  historyRetention: {
    flag: 'history-retention',
    group: 'state',
    env: ['KALYPSO_HISTORY_RETENTION'],
    default: 0,
    description:
      'How long state history is kept, in whole months (a month goes when all of it is older). 0: forever. Current states are always kept.',
    parse: retention,
    shownDefault: '0',
  } satisfies Setting<number>,
} as const;

export const STATE_TUNING = {
  /** How often the rollout table behind the delivery metrics catches up with the writes. */
  rolloutRefreshMs: 2_000,
  /**
   * How the report summaries catch up with the writes and with reconcilers turning stale — what
   * Grafana reads (the API folds the whole queue in before it reads). Every `intervalMs`, a slice of
   * the queue: the oldest writes that begin within `sliceReconcilers` reconcilers; while more is
   * queued the next slice follows after a rest of `moreRestRatio` × the slice's time, and once the
   * queue is empty after `restRatio` × it (or the interval). At fleet L a slice of 4,000 took
   * 0.2–0.5 s under ingest, so the views trail a burst of writes by a second or two instead of by
   * the burst and one refresh of all of it (docs/benchmarks/fleet-l-refresh.md). The current
   * rollouts' counts are recounted after the last slice, or every `recountMs` during a burst.
   */
  summaryRefresh: { intervalMs: 1_000, sliceReconcilers: 4_000, recountMs: 1_000, restRatio: 1, moreRestRatio: 0.5 },
  /**
   * The summary refresh gives way to writes for at most this long (see refreshYield): the views are
   * to be current within 2 s of a write, also during a burst.
   */
  summaryRefreshYieldMs: 500,
  /**
   * The background refreshes give way to writes: a refresh that falls due while the hub is writing
   * (a write under way, or one ended less than `gapMs` ago) waits until it is not, checking every
   * `recheckMs`, for at most `maxMs`. A burst of reports — collectors replaying what they queued
   * offline — is then written with the machine's CPU to itself, and folded into the summaries and
   * rollouts once, after it, instead of by refreshes competing with it. Reports are unaffected (they
   * fold the queues in before they read); the rollout table behind the SQL views (Grafana's
   * delivery panels) may lag by that half minute during a burst. The summary refresh waits at most
   * `summaryRefreshYieldMs`.
   */
  refreshYield: { maxMs: 30_000, recheckMs: 250, gapMs: 100 },
  /** How often history partitions are created ahead of the clock and retention applied. */
  historyMaintenanceMs: 6 * 3_600_000,
} as const;
