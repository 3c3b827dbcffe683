// Keeps the rollout table (schema/0008) up to date. Writers queue what they changed — endpoint and
// time range — in the statement that writes it, so a crash between the write and the refresh loses
// nothing; a timer on every replica drains the queue, and the delivery report drains it before it
// reads (read-your-writes). Refreshes are serialized by an advisory lock: a refresh that started
// earlier can never overwrite a later one's result.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Logger } from '../log/logger.ts';
import type { HubMetrics } from '../metrics/hub-metrics.ts';
import type { HubDatabase } from './database-schema.ts';
import { markEndpointsChanged } from './notify/subjects.ts';
import { underRefreshLock } from './refresh-lock.ts';
import { REFRESH_REST_RATIO, repeatThroughOutages, type YieldTo } from './repeat-every.ts';

/**
 * An INSERT queueing a refresh for the rows of `ranges` — a query of (endpoint id, from, to) — as
 * one queue row, or nothing when it has no rows. For use inside a writer's statement or transaction.
 */
export function queueRolloutRefresh(ranges: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`INSERT INTO rollout_refresh_queue (manifests_endpoint_ids, from_times, to_times)
             SELECT array_agg(x.e), array_agg(x.f), array_agg(x.t) FROM (${ranges}) AS x(e, f, t) HAVING count(*) > 0`;
}

/**
 * Drains the queue and refreshes the rollouts it names. `wait: false` gives up at once when another
 * refresh holds the lock (the timer's way: that refresh or the next tick does the work).
 * Returns how many endpoints it refreshed and how many rollouts changed, or undefined when it gave up.
 */
export async function refreshRollouts(
  db: Kysely<HubDatabase>,
  options: { readonly wait: boolean },
): Promise<{ endpoints: number; changed: number } | undefined> {
  return await underRefreshLock(db, 'kalypso_rollout_refresh', options.wait, async (trx) => {
    const taken = await sql<{ endpoint_ids: unknown[]; from_times: unknown[]; to_times: unknown[] }>`
      WITH taken AS (DELETE FROM rollout_refresh_queue RETURNING *)
      SELECT coalesce(array_agg(x.e), '{}') AS endpoint_ids, coalesce(array_agg(x.f), '{}') AS from_times,
             coalesce(array_agg(x.t), '{}') AS to_times
        FROM taken, unnest(taken.manifests_endpoint_ids, taken.from_times, taken.to_times) AS x(e, f, t)`.execute(trx);
    const { endpoint_ids: endpoints, from_times: from, to_times: to } = taken.rows[0]!;
    if (endpoints.length === 0) return { endpoints: 0, changed: 0 };
    // A notifier, if one runs, judges the rollouts of these endpoints again (src/notify/).
    await markEndpointsChanged(trx, endpoints);
    const refreshed = await sql<{ refreshed: number }>`
      SELECT kalypso_refresh_rollouts(${endpoints}::bigint[], ${from}::timestamptz[], ${to}::timestamptz[]) AS refreshed`.execute(trx);
    return { endpoints: new Set(endpoints.map(String)).size, changed: refreshed.rows[0]!.refreshed };
  });
}

/** Refreshes every `intervalMs` until stopped; failures are logged and retried on the next tick. */
export function scheduleRolloutRefresh(
  db: Kysely<HubDatabase>,
  intervalMs: number,
  metrics: Pick<HubMetrics, 'rolloutRefreshSeconds' | 'rolloutsRefreshed' | 'rolloutRefreshLastRun'>,
  log: Logger,
  yieldTo?: YieldTo,
): { stop(): Promise<void> } {
  return repeatThroughOutages(
    intervalMs,
    'rollout refresh',
    async () => {
      const started = performance.now();
      const result = await refreshRollouts(db, { wait: false });
      // Another replica refreshing (undefined): its gauge says so, not this one's.
      if (result !== undefined) metrics.rolloutRefreshLastRun.set(Date.now() / 1_000);
      // Idle ticks (nothing queued, or another replica refreshing) are not refreshes.
      if (result === undefined || result.endpoints === 0) return;
      metrics.rolloutRefreshSeconds.observe((performance.now() - started) / 1_000);
      metrics.rolloutsRefreshed.inc(result.changed);
      log.debug(result, 'rollouts refreshed');
    },
    log,
    { restRatio: REFRESH_REST_RATIO, ...(yieldTo === undefined ? {} : { yieldTo }) },
  );
}
