// Every rollout derived again from the whole history: what the refresh kept must agree with it.
import { readFile } from 'node:fs/promises';
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

/**
 * The refresh as a released migration defined it (its text read from the file), renamed
 * kalypso_refresh_rollouts_<version>: an oracle or a witness of an older behaviour.
 */
export async function releasedRefresh(migration: string): Promise<{ name: string; sql: string }> {
  const text = await readFile(new URL(`../../schema/${migration}.sql`, import.meta.url), 'utf8');
  const start = text.indexOf('CREATE OR REPLACE FUNCTION kalypso_refresh_rollouts(');
  const end = text.indexOf('END $$;', start) + 'END $$;'.length;
  if (start < 0 || end < start) throw new Error(`schema/${migration} has no kalypso_refresh_rollouts`);
  const name = `kalypso_refresh_rollouts_${migration.slice(0, 4)}`;
  return { name, sql: text.slice(start, end).replace('FUNCTION kalypso_refresh_rollouts(', `FUNCTION ${name}(`) };
}
