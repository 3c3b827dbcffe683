// Settings the database must know so that its reporting views (schema/0004, 0009) judge and order
// as the API does — the API reads them from there too. Written on start; replicas run with the same
// settings, so the last writer is as good as any.
import { type Kysely, sql } from 'kysely';
import type { HubDatabase } from './database-schema.ts';

export interface PublishedSettings {
  readonly staleAfterMs: number;
  /** The configured promotion order (--environment-order); empty: environments in the order first seen. */
  readonly environmentOrder: readonly string[];
}

export async function publishHubSettings(db: Kysely<HubDatabase>, settings: PublishedSettings): Promise<void> {
  const staleAfter = sql`make_interval(secs => ${settings.staleAfterMs / 1_000}::double precision)`;
  const environmentOrder = sql`${[...settings.environmentOrder]}::text[]`;
  await sql`UPDATE hub_settings SET stale_after = ${staleAfter}, environment_order = ${environmentOrder}, updated_at = now()
             WHERE stale_after IS DISTINCT FROM ${staleAfter} OR environment_order IS DISTINCT FROM ${environmentOrder}`.execute(db);
}
