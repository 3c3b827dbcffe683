// Settings the database must know so that its reporting views (schema/0004, 0009) judge and order
// as the API does — the API reads them from there too. Written on start; replicas run with the same
// settings, so the last writer is as good as any.
import { type Kysely, sql } from 'kysely';
import type { HubDatabase } from './database-schema.ts';
import { refreshSummaries } from './summary-refresh.ts';

export interface PublishedSettings {
  readonly staleAfterMs: number;
  /** The configured promotion order (--environment-order); empty: environments in the order first seen. */
  readonly environmentOrder: readonly string[];
}

export async function publishHubSettings(db: Kysely<HubDatabase>, settings: PublishedSettings, at: Date = new Date()): Promise<void> {
  const staleAfter = sql`make_interval(secs => ${settings.staleAfterMs / 1_000}::double precision)`;
  const environmentOrder = sql`${[...settings.environmentOrder]}::text[]`;
  const changed = await sql<{ stale_after_changed: boolean }>`
    UPDATE hub_settings h SET stale_after = ${staleAfter}, environment_order = ${environmentOrder}, updated_at = now()
      FROM (SELECT stale_after AS before FROM hub_settings) old
     WHERE h.stale_after IS DISTINCT FROM ${staleAfter} OR h.environment_order IS DISTINCT FROM ${environmentOrder}
    RETURNING old.before IS DISTINCT FROM h.stale_after AS stale_after_changed`.execute(db);
  // Every stale count was judged by the old setting.
  if (changed.rows[0]?.stale_after_changed === true) await refreshSummaries(db, { wait: true, at, everything: true });
}
