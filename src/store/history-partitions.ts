// Keeps the monthly partitions of deployment_state_history (schema/0006) ahead of the clock and
// applies the history retention: on start, then every few hours. Every replica does it; the
// database functions take an advisory lock, so concurrent runs are harmless.
import { type Kysely, sql } from 'kysely';
import type { Logger } from '../log/logger.ts';
import type { HubDatabase } from './database-schema.ts';
import { repeatEvery } from './repeat-every.ts';
import { STATE_TUNING } from './state-settings.ts';
import { isDatabaseUnavailable } from './store-errors.ts';

export interface HistoryMaintenance {
  readonly partitionsCreated: number;
  readonly partitionsDropped: number;
}

/** Partitions for this month and the next two; retention, when set, drops months older than it. */
export async function maintainHistoryPartitions(
  db: Kysely<HubDatabase>,
  options: { readonly retentionMs: number; readonly now: Date },
): Promise<HistoryMaintenance> {
  const ahead = new Date(Date.UTC(options.now.getUTCFullYear(), options.now.getUTCMonth() + 2, 1));
  const created = await sql<{ n: number }>`SELECT kalypso_ensure_history_partitions(${options.now}, ${ahead}) AS n`.execute(db);
  let dropped = 0;
  if (options.retentionMs > 0) {
    const cutoff = new Date(options.now.getTime() - options.retentionMs);
    dropped = (await sql<{ n: number }>`SELECT kalypso_drop_history_before(${cutoff}) AS n`.execute(db)).rows[0]!.n;
  }
  return { partitionsCreated: created.rows[0]!.n, partitionsDropped: dropped };
}

/** Runs the maintenance now and then on a timer until stopped; failures are logged and retried. */
export function scheduleHistoryMaintenance(
  db: Kysely<HubDatabase>,
  options: { readonly retentionMs: number; readonly clock: () => Date },
  log: Logger,
): { stop(): Promise<void> } {
  return repeatEvery(
    STATE_TUNING.historyMaintenanceMs,
    async () => {
      try {
        const result = await maintainHistoryPartitions(db, { retentionMs: options.retentionMs, now: options.clock() });
        if (result.partitionsCreated + result.partitionsDropped > 0) log.info(result, 'history partitions maintained');
      } catch (error) {
        // An unreachable database is an outage, not a bug: no stack trace.
        log.warn({ err: isDatabaseUnavailable(error) ? (error as Error).message : error }, 'history partition maintenance failed; will retry');
      }
    },
    { immediately: true },
  );
}
