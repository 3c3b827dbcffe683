// Keeps the report summaries (schema/0012: status counts per endpoint and commit, drift, per-host
// counts) current. Writers queue the reconcilers they changed in the statement that changes them
// (triggers), so a crash between the write and the refresh loses nothing; a timer on every replica
// folds the queue in — and the reconcilers that have turned stale — and every report that reads a
// summary folds it in first, so it sees the writes acknowledged before it. Refreshes are serialized
// by an advisory lock: an earlier refresh can never overwrite a later one's result.
import { type Kysely, sql } from 'kysely';
import type { Logger } from '../log/logger.ts';
import type { HubMetrics } from '../metrics/hub-metrics.ts';
import type { HubDatabase } from './database-schema.ts';
import { underRefreshLock } from './refresh-lock.ts';
import { repeatThroughOutages, type YieldTo } from './repeat-every.ts';

/** How many reconcilers and hosts a refresh looked at, and whether it left some of the queue. */
export interface SummaryRefresh {
  readonly reconcilers: number;
  readonly hosts: number;
  /**
   * Of a slice (`maxReconcilers`): more is queued — the slice took part of the queue, or writes
   * queued more since it began.
   */
  readonly more?: boolean;
}

export interface SummaryRefreshOptions {
  readonly wait: boolean;
  readonly at: Date;
  readonly everything?: boolean;
  /**
   * A slice: the oldest queued writes that begin within this many reconcilers (at least one write),
   * the rest left for the next refresh. Without it the whole queue (what a report needs).
   */
  readonly maxReconcilers?: number;
  /**
   * Whether to recount the current rollouts' counts (schema/0033) after the fold, given whether more
   * is queued; always without it. The timer leaves it to the last slice of a burst, or to every
   * second of one: each slice of a burst in host order touches nearly every endpoint of the
   * environment, and recounting them slice after slice cost as much as the slices themselves.
   */
  readonly recountWhen?: (more: boolean) => boolean;
}

/**
 * Folds the queued changes (and the staleness due by `at`) into the summaries. `wait: false` gives
 * up at once when another refresh holds the lock (the timer's way: that refresh or the next tick
 * does the work); undefined then. `everything` recomputes every summary.
 */
export async function refreshSummaries(db: Kysely<HubDatabase>, options: SummaryRefreshOptions): Promise<SummaryRefresh | undefined> {
  return await underRefreshLock(db, 'kalypso_summary_refresh', options.wait, async (trx) => {
    const result = await sql<Required<SummaryRefresh>>`
      SELECT reconcilers, hosts, more
        FROM kalypso_refresh_summaries(${options.everything === true}, ${options.at}::timestamptz, ${options.maxReconcilers ?? null}::int)`.execute(trx);
    const { reconcilers, hosts, more } = result.rows[0]!;
    // The current rollouts' counts of now follow the counts it changed (schema/0033): recounted last,
    // so that the lock the recount shares with the rollout refresh is held only until this commits.
    if (options.recountWhen?.(more) ?? true) await sql`SELECT kalypso_count_current_rollouts('{}')`.execute(trx);
    return options.maxReconcilers === undefined ? { reconcilers, hosts } : { reconcilers, hosts, more };
  });
}

/**
 * Rows of the transition-count queue (schema/0028) one fold takes at most, so that a tick stays
 * bounded however much ingest queued: a batch of 1,000 records on as many endpoints queues up to
 * 1,000 rows, so 30 batches a second queue 30,000 rows at worst.
 */
const TRANSITION_FOLD_ROWS = 100_000;

/**
 * Folds queued transition counts in; how many. Only the timer does: readers read the queue too, so
 * no report waits for a fold.
 */
export async function foldTransitionCounts(db: Kysely<HubDatabase>, maxRows: number | null = TRANSITION_FOLD_ROWS): Promise<number> {
  const result = await sql<{ folded: number }>`SELECT kalypso_fold_transition_counts(${maxRows}::int) AS folded`.execute(db);
  return result.rows[0]!.folded;
}

/** How the timer folds the queue in (STATE_TUNING.summaryRefresh). */
export interface SummaryRefreshTuning {
  readonly intervalMs: number;
  readonly sliceReconcilers: number;
  readonly recountMs: number;
  /** The rest after a refresh that left nothing queued, × its duration (see repeatEvery). */
  readonly restRatio: number;
  /** The rest after a slice that left more queued, × its duration. */
  readonly moreRestRatio: number;
}

/** What a report does before it reads a summary: fold in what was written before it asked. */
export async function summariesCurrent(db: Kysely<HubDatabase>, at: Date): Promise<void> {
  await refreshSummaries(db, { wait: true, at });
}

/**
 * Refreshes every `intervalMs` until stopped, as of `clock()`; failures are logged and retried. Each
 * tick folds a slice of at most `tuning.sliceReconcilers` (a burst is folded slice after slice, each
 * committed in a fraction of a second, so that the views trail the writes by about a slice rather
 * than by the burst), and recounts the current rollouts after the last slice or every
 * `tuning.recountMs` during a burst.
 */
export function scheduleSummaryRefresh(
  db: Kysely<HubDatabase>,
  tuning: SummaryRefreshTuning,
  clock: () => Date,
  metrics: Pick<HubMetrics, 'summaryRefreshSeconds' | 'summaryKeysRefreshed' | 'summaryRefreshLastRun'>,
  log: Logger,
  yieldTo?: YieldTo,
): { stop(): Promise<void> } {
  let lastRecount = -Infinity;
  const recountWhen = (more: boolean): boolean => {
    if (more && performance.now() - lastRecount < tuning.recountMs) return false;
    lastRecount = performance.now();
    return true;
  };
  return repeatThroughOutages(
    tuning.intervalMs,
    'summary refresh',
    async () => {
      const started = performance.now();
      const result = await refreshSummaries(db, { wait: false, at: clock(), maxReconcilers: tuning.sliceReconcilers, recountWhen });
      await foldTransitionCounts(db);
      // Another replica refreshing (undefined): its gauge says so, not this one's.
      if (result !== undefined) metrics.summaryRefreshLastRun.set(Date.now() / 1_000);
      // Idle ticks (nothing queued or due, or another replica refreshing) are not refreshes.
      if (result === undefined || result.reconcilers + result.hosts === 0) return result?.more === true;
      metrics.summaryRefreshSeconds.observe((performance.now() - started) / 1_000);
      metrics.summaryKeysRefreshed.inc({ kind: 'reconciler' }, result.reconcilers);
      metrics.summaryKeysRefreshed.inc({ kind: 'host' }, result.hosts);
      log.debug(result, 'summaries refreshed');
      return result.more === true;
    },
    log,
    { restRatio: tuning.restRatio, moreRestRatio: tuning.moreRestRatio, ...(yieldTo === undefined ? {} : { yieldTo }) },
  );
}
