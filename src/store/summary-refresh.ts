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
import { refreshRollouts } from './rollout-refresh.ts';
import { REFRESH_REST_RATIO, repeatThroughOutages, type YieldTo } from './repeat-every.ts';

/** How many reconcilers and hosts a refresh looked at. */
export interface SummaryRefresh {
  readonly reconcilers: number;
  readonly hosts: number;
}

/**
 * Folds the queued changes (and the staleness due by `at`) into the summaries. `wait: false` gives
 * up at once when another refresh holds the lock (the timer's way: that refresh or the next tick
 * does the work); undefined then. `everything` recomputes every summary.
 */
export async function refreshSummaries(
  db: Kysely<HubDatabase>,
  options: { readonly wait: boolean; readonly at: Date; readonly everything?: boolean },
): Promise<SummaryRefresh | undefined> {
  return await underRefreshLock(db, 'kalypso_summary_refresh', options.wait, async (trx) => {
    const result = await sql<SummaryRefresh>`
      SELECT reconcilers, hosts FROM kalypso_refresh_summaries(${options.everything === true}, ${options.at}::timestamptz)`.execute(trx);
    // The current rollouts' counts of now follow the counts it changed (schema/0033): recounted last,
    // so that the lock the recount shares with the rollout refresh is held only until this commits.
    await sql`SELECT kalypso_count_current_rollouts('{}')`.execute(trx);
    // And, in one round trip (the timer's every tick), the counts per target (schema/0036): of the
    // targets whose counts it changed, and of those whose desired state changed since (until then,
    // kalypso_environment_state sums those itself); and those of the environments a target joined or
    // left (schema/0050; their counts otherwise move with the counts this refresh changed).
    await sql`SELECT kalypso_count_target_states('{}'), kalypso_count_environments(${options.everything === true})`.execute(trx);
    return result.rows[0]!;
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

/**
 * What a report does before it reads a summary: fold in what was written before it asked — and,
 * with `rollouts`, the rollouts first (the delivery report). One statement first asks whether
 * there is anything to do; only then does the report refresh (a transaction, the lock, the refresh,
 * the recount, commit: five round trips, and a wait for a refresh under way).
 *
 * Why "nothing queued" means "current": a writer queues what it changed in the transaction that
 * changes it (triggers), and a refresh deletes the queue rows it folds in within the transaction
 * that folds them in. A row deleted by a transaction not yet committed is still seen by others; so
 * if this statement sees no queue row, every write acknowledged before it was folded in by a
 * refresh that has committed. What the queues do not hold, live reconcilers silent past
 * stale-after by `at`, is asked the way the refresh finds them (summary_reconciler_live).
 */
export async function summariesCurrent(db: Kysely<HubDatabase>, at: Date, options: { readonly rollouts?: boolean } = {}): Promise<void> {
  const queued = await sql<{ summaries: boolean; rollouts: boolean }>`
    SELECT EXISTS (SELECT 1 FROM summary_queue) OR EXISTS (SELECT 1 FROM current_rollout_count_queue)
             OR EXISTS (SELECT 1 FROM environment_summary_queue)
             -- The oldest live one, the first entry of summary_reconciler_live: a condition on
             -- last_seen_at against a subquery's cut is estimated at a third of the rows (a scan of all).
             OR (SELECT min(c.last_seen_at) FROM summary_reconciler c WHERE NOT c.counted_stale)
                  < ${at}::timestamptz - (SELECT hs.stale_after FROM hub_settings hs) AS summaries,
           ${options.rollouts === true ? sql`EXISTS (SELECT 1 FROM rollout_refresh_queue)` : sql`false`} AS rollouts`.execute(db);
  const { summaries, rollouts } = queued.rows[0]!;
  // Read-your-writes: whatever any replica has written is in the rollout table before it is read.
  if (rollouts) await refreshRollouts(db, { wait: true });
  if (summaries || rollouts) await refreshSummaries(db, { wait: true, at });
}

/** Refreshes every `intervalMs` until stopped, as of `clock()`; failures are logged and retried. */
export function scheduleSummaryRefresh(
  db: Kysely<HubDatabase>,
  intervalMs: number,
  clock: () => Date,
  metrics: Pick<HubMetrics, 'summaryRefreshSeconds' | 'summaryKeysRefreshed' | 'summaryRefreshLastRun'>,
  log: Logger,
  yieldTo?: YieldTo,
): { stop(): Promise<void> } {
  return repeatThroughOutages(
    intervalMs,
    'summary refresh',
    async () => {
      const started = performance.now();
      const result = await refreshSummaries(db, { wait: false, at: clock() });
      await foldTransitionCounts(db);
      // Another replica refreshing (undefined): its gauge says so, not this one's.
      if (result !== undefined) metrics.summaryRefreshLastRun.set(Date.now() / 1_000);
      // Idle ticks (nothing queued or due, or another replica refreshing) are not refreshes.
      if (result === undefined || result.reconcilers + result.hosts === 0) return;
      metrics.summaryRefreshSeconds.observe((performance.now() - started) / 1_000);
      metrics.summaryKeysRefreshed.inc({ kind: 'reconciler' }, result.reconcilers);
      metrics.summaryKeysRefreshed.inc({ kind: 'host' }, result.hosts);
      log.debug(result, 'summaries refreshed');
    },
    log,
    { restRatio: REFRESH_REST_RATIO, ...(yieldTo === undefined ? {} : { yieldTo }) },
  );
}
