// Settings the database must know so that its reporting views (schema/0004, 0009) judge and order
// as the API does — the API reads them from there too — and the alert views (schema/0026) alert as
// configured. Written on start; replicas run with the same settings, so the last writer is as good
// as any.
import { type Kysely, sql } from 'kysely';
import type { HubDatabase } from './database-schema.ts';
import { STATE_SETTINGS } from './state-settings.ts';
import { refreshSummaries } from './summary-refresh.ts';

export interface PublishedSettings {
  readonly staleAfterMs: number;
  /** The configured promotion order (--environment-order); empty: environments in the order first seen. */
  readonly environmentOrder: readonly string[];
  /** The alert thresholds (--rollout-window, --off-commit-after); their defaults when not given. */
  readonly rolloutWindowMs?: number;
  readonly offCommitAfterMs?: number;
}

const interval = (ms: number) => sql`make_interval(secs => ${ms / 1_000}::double precision)`;

export async function publishHubSettings(db: Kysely<HubDatabase>, settings: PublishedSettings, at: Date = new Date()): Promise<void> {
  const staleAfter = interval(settings.staleAfterMs);
  const environmentOrder = sql`${[...settings.environmentOrder]}::text[]`;
  const rolloutWindow = interval(settings.rolloutWindowMs ?? STATE_SETTINGS.rolloutWindow.default);
  const offCommitAfter = interval(settings.offCommitAfterMs ?? STATE_SETTINGS.offCommitAfter.default);
  const changed = await sql<{ stale_after_changed: boolean }>`
    UPDATE hub_settings h SET stale_after = ${staleAfter}, environment_order = ${environmentOrder},
                              rollout_window = ${rolloutWindow}, off_commit_after = ${offCommitAfter}, updated_at = now()
      FROM (SELECT stale_after AS before FROM hub_settings) old
     WHERE h.stale_after IS DISTINCT FROM ${staleAfter} OR h.environment_order IS DISTINCT FROM ${environmentOrder}
        OR h.rollout_window IS DISTINCT FROM ${rolloutWindow} OR h.off_commit_after IS DISTINCT FROM ${offCommitAfter}
    RETURNING old.before IS DISTINCT FROM h.stale_after AS stale_after_changed`.execute(db);
  // Every stale count was judged by the old setting.
  if (changed.rows[0]?.stale_after_changed === true) await refreshSummaries(db, { wait: true, at, everything: true });
}
