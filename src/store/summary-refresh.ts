// Keeps the report summaries (schema/0012: status counts per endpoint and commit, drift, per-host
// counts) current. Writers queue what they changed in the statement that changes it (triggers), so
// a crash between the write and the refresh loses nothing; a timer on every replica folds the queue
// in — and takes the endpoints and hosts whose next reconciler has turned stale — and every report
// that reads a summary folds it in first, so it sees the writes acknowledged before it. Refreshes
// are serialized by an advisory lock: an earlier refresh can never overwrite a later one's result.
import { type Kysely, sql } from 'kysely';
import type { Logger } from '../log/logger.ts';
import type { HubMetrics } from '../metrics/hub-metrics.ts';
import type { HubDatabase } from './database-schema.ts';
import { repeatThroughOutages } from './repeat-every.ts';

const LOCK = sql`hashtext('kalypso_summary_refresh')`;

export interface SummaryRefresh {
  readonly endpoints: number;
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
  return await db.transaction().execute(async (trx) => {
    if (options.wait) {
      await sql`SELECT pg_advisory_xact_lock(${LOCK})`.execute(trx);
    } else {
      const locked = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${LOCK}) AS locked`.execute(trx);
      if (!locked.rows[0]!.locked) return undefined;
    }
    // A statement of its own after the lock, so that it sees everything committed before.
    const result = await sql<SummaryRefresh>`
      SELECT endpoints, hosts FROM kalypso_refresh_summaries(${options.everything === true}, ${options.at}::timestamptz)`.execute(trx);
    return result.rows[0]!;
  });
}

/** What a report does before it reads a summary: fold in what was written before it asked. */
export async function summariesCurrent(db: Kysely<HubDatabase>, at: Date): Promise<void> {
  await refreshSummaries(db, { wait: true, at });
}

/** Refreshes every `intervalMs` until stopped, as of `clock()`; failures are logged and retried. */
export function scheduleSummaryRefresh(
  db: Kysely<HubDatabase>,
  intervalMs: number,
  clock: () => Date,
  metrics: Pick<HubMetrics, 'summaryRefreshSeconds' | 'summaryKeysRefreshed'>,
  log: Logger,
): { stop(): Promise<void> } {
  return repeatThroughOutages(
    intervalMs,
    'summary refresh',
    async () => {
      const started = performance.now();
      const result = await refreshSummaries(db, { wait: false, at: clock() });
      // Idle ticks (nothing queued or due, or another replica refreshing) are not refreshes.
      if (result === undefined || result.endpoints + result.hosts === 0) return;
      metrics.summaryRefreshSeconds.observe((performance.now() - started) / 1_000);
      metrics.summaryKeysRefreshed.inc({ kind: 'endpoint' }, result.endpoints);
      metrics.summaryKeysRefreshed.inc({ kind: 'host' }, result.hosts);
      log.debug(result, 'summaries refreshed');
    },
    log,
  );
}
