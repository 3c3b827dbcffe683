// Every rollout derived again from the whole history (what the refresh kept must agree with it), and
// the store's functions as released migrations defined them (oracles, witnesses of older plans).
import { readFile } from 'node:fs/promises';
import type pg from 'pg';

/**
 * Empties the rollout tables and derives every rollout of every endpoint with `refresh` (the
 * current kalypso_refresh_rollouts, or an older version as an oracle). Run it in a transaction that
 * is rolled back (TestDatabase.rolledBack), so that it leaves no trace.
 */
export async function rederiveEveryRollout(client: pg.Client, refresh = 'kalypso_refresh_rollouts'): Promise<void> {
  await client.query('DELETE FROM rollout_laggard; DELETE FROM rollout; DELETE FROM current_rollout_count');
  await client.query(refreshEveryRollout(refresh));
}

/** The statement that has `refresh` refresh every rollout of every endpoint, over all time. */
export function refreshEveryRollout(refresh = 'kalypso_refresh_rollouts'): string {
  return `SELECT ${refresh}(array_agg(id), array_agg('-infinity'::timestamptz), array_agg('infinity'::timestamptz)) FROM manifests_endpoint`;
}

/**
 * A function as a released migration defined it (its text read from the file), renamed
 * <name>_<version>: an oracle or a witness of an older behaviour.
 */
export async function releasedFunction(migration: string, name: string): Promise<{ name: string; sql: string }> {
  const text = await readFile(new URL(`../../schema/${migration}.sql`, import.meta.url), 'utf8');
  const start = [`CREATE OR REPLACE FUNCTION ${name}(`, `CREATE FUNCTION ${name}(`].map((head) => text.indexOf(head)).find((at) => at >= 0) ?? -1;
  // A PL/pgSQL body ends with END; an SQL one with its closing quote on a line of its own.
  const ends = ['END $$;', 'END $function$;', '\n$$;'].map((end) => [text.indexOf(end, start), end.length] as const).filter(([at]) => at >= 0);
  if (start < 0 || ends.length === 0) throw new Error(`schema/${migration} has no ${name}`);
  const [at, length] = ends.reduce((first, next) => (next[0] < first[0] ? next : first));
  const renamed = `${name}_${migration.slice(0, 4)}`;
  return { name: renamed, sql: text.slice(start, at + length).replace(`FUNCTION ${name}(`, `FUNCTION ${renamed}(`) };
}

/** The rollout refresh as a released migration defined it (see releasedFunction). */
export function releasedRefresh(migration: string): Promise<{ name: string; sql: string }> {
  return releasedFunction(migration, 'kalypso_refresh_rollouts');
}
