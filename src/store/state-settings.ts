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
   * How often the report summaries catch up with the writes and with reconcilers turning stale: what
   * Grafana reads is at most this old (the API folds the queue in before it reads).
   */
  summaryRefreshMs: 1_000,
  /**
   * The background refreshes give way to writes: a refresh that falls due while the hub is writing
   * (a write under way, or one ended less than `gapMs` ago) waits until it is not, checking every
   * `recheckMs`, for at most `maxMs` (beyond the rest it earned, REFRESH_REST_RATIO). A burst of
   * reports — collectors replaying what they queued offline, an environment rolling out — is then
   * written with the machine's CPU to itself, and folded into the summaries and rollouts once, after
   * it, instead of by refreshes competing with it; when the writes pause, the refresh runs at once.
   * Reports are unaffected (they fold the queues in before they read); the SQL views (Grafana) may
   * lag by that half minute during a burst, and by the fold of the burst after it.
   */
  refreshYield: { maxMs: 30_000, recheckMs: 250, gapMs: 100 },
  /** How often history partitions are created ahead of the clock and retention applied. */
  historyMaintenanceMs: 6 * 3_600_000,
} as const;
