// A long-poll of the gate whose client goes away stops there: it reads nothing more. (Such a
// request is not waited for when the hub stops, so a read then found the database closed beneath
// it and logged "request failed: driver has already been destroyed".)
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { endpointOf, writeKnownFleet } from '../support/known-fleet.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';

let testDb: TestDatabase;
let hub: RunningHub;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url);
  await writeKnownFleet(hub.database.db);
});

afterAll(async () => {
  await hub.stop();
  await testDb.drop();
});

/**
 * The gate's reads waiting for a lock on `table` in this file's database (the hub's timers may wait
 * too: not counted). Other test files' databases are clones of one template, so their tables have
 * the same OIDs: pg_stat_activity and pg_locks are filtered by database.
 */
async function waitingOn(client: pg.Client, table: string): Promise<string[]> {
  const result = await client.query<{ query: string }>(
    `SELECT a.query FROM pg_stat_activity a
      WHERE a.datname = current_database() AND a.wait_event_type = 'Lock' AND a.query LIKE '%kalypso_gate_endpoints(%'
        AND EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted AND l.relation = $1::regclass
                      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))`,
    [table],
  );
  return result.rows.map((row) => row.query);
}

it('reads no more once the client of a waiting gate has gone', async () => {
  // Unsettled (one subscriber in progress), so the request waits.
  const url = `http://127.0.0.1:${hub.ports.http}/api/v1/deployment-state?manifestsEndpoint=${encodeURIComponent(endpointOf('dev', 'hello-world', 'functional-test'))}&commit=c-dev-3&wait=20s`;
  const client = new AbortController();
  const pending = fetch(url, { signal: client.signal }).then(
    () => 'answered',
    () => 'aborted',
  );
  await new Promise((resolve) => setTimeout(resolve, 300));

  // Every read of the gate judges the subscribers' current state: with that table locked, a read
  // waits, and shows in pg_stat_activity.
  const locker = new pg.Client({ connectionString: testDb.url });
  const observer = new pg.Client({ connectionString: testDb.url });
  await Promise.all([locker.connect(), observer.connect()]);
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE deployment_state IN ACCESS EXCLUSIVE MODE');
    // The method can see a read: one asked now waits on the lock.
    const asked = fetch(url.replace('&wait=20s', '')).then((response) => response.json() as Promise<{ total: number }>);
    await expect.poll(async () => (await waitingOn(observer, 'deployment_state')).length, { timeout: 5_000 }).toBe(1);
    await locker.query('ROLLBACK');
    expect((await asked).total).toBe(2);

    await locker.query('BEGIN');
    await locker.query('LOCK TABLE deployment_state IN ACCESS EXCLUSIVE MODE');
    client.abort();
    expect(await pending).toBe('aborted');
    // The waiting request wakes on its client's going; it must not read again.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await waitingOn(observer, 'deployment_state')).toEqual([]);
    await locker.query('ROLLBACK');
  } finally {
    await Promise.all([locker.end(), observer.end()]);
  }
});
