// Holding the hub's writes from outside: a session that takes a lock every write of history
// needs, so that exports stay in flight (a crash, a signal, an outage arrives meanwhile), and a
// count of the hub's sessions waiting on it.
import pg from 'pg';
import { queryAt } from './stored-reports.ts';

/**
 * A session holding `lock` (by default the one every history write needs) in an open transaction:
 * COMMIT and end() it to let the writes through. PostgreSQL dying under it is not an error here.
 */
export async function holdWrites(url: string, lock = 'LOCK TABLE deployment_state_history IN EXCLUSIVE MODE'): Promise<pg.Client> {
  const locker = lockingSession(url);
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query(lock);
  return locker;
}

/** A session kept open to hold locks; its database stopping or being dropped under it is expected. */
export function lockingSession(url: string): pg.Client {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  return client;
}

/** How many of the hub's sessions in the database at `url` wait on a lock. */
export async function hubSessionsWaitingOnLocks(url: string): Promise<number> {
  const rows = await queryAt(url)<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'kalypso-hub' AND wait_event_type = 'Lock'`,
  );
  return rows[0]!.n;
}
