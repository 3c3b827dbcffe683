// Settings the database must know so that its reporting views (schema/0004) judge as the API
// does. Written on start; replicas run with the same settings, so the last writer is as good as any.
import { type Kysely, sql } from 'kysely';
import type { HubDatabase } from './database-schema.ts';

export async function publishHubSettings(db: Kysely<HubDatabase>, settings: { readonly staleAfterMs: number }): Promise<void> {
  const staleAfter = sql`make_interval(secs => ${settings.staleAfterMs / 1_000}::double precision)`;
  await sql`UPDATE hub_settings SET stale_after = ${staleAfter}, updated_at = now()
             WHERE stale_after IS DISTINCT FROM ${staleAfter}`.execute(db);
}
