// Every rollout derived again from the whole history: what the refresh kept must agree with it.
import type pg from 'pg';

/**
 * Empties the rollout tables and derives every rollout of every endpoint with `refresh` (the
 * current kalypso_refresh_rollouts, or an older version as an oracle). Run it in a transaction that
 * is rolled back (TestDatabase.rolledBack), so that it leaves no trace.
 */
export async function rederiveEveryRollout(client: pg.Client, refresh = 'kalypso_refresh_rollouts'): Promise<void> {
  await client.query('DELETE FROM rollout_laggard; DELETE FROM rollout');
  await client.query(`SELECT ${refresh}(array_agg(id), array_agg('-infinity'::timestamptz), array_agg('infinity'::timestamptz)) FROM manifests_endpoint`);
}
