// The report summaries kept current on write (schema/0012): staleness is an event that comes at
// its moment — in the API at once, in the views with the refresher's next tick — and a new report
// takes it back; writes are folded in before a report reads; a refresh recomputes only what
// changed or came due, not the fleet.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { createLogger } from '../../src/log/logger.ts';
import { connectDatabase, type Database } from '../../src/store/connect.ts';
import { publishHubSettings } from '../../src/store/hub-settings.ts';
import { refreshRollouts } from '../../src/store/rollout-refresh.ts';
import { refreshSummaries, summariesCurrent } from '../../src/store/summary-refresh.ts';
import { apiGet } from '../support/api-get.ts';
import { FleetBuilder } from '../support/known-fleet.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';
import { waitFor } from '../support/wait-for.ts';

const STALE_AFTER_MS = 10 * 60_000;
let testDb: TestDatabase;
let hub: RunningHub;
/** The hub's clock, which the test moves (never behind the real one: reports are capped at receipt). */
let now = Date.now();

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url, ['--stale-after', '10m'], { clock: () => new Date(now) });
});

afterAll(async () => {
  await hub.stop();
  await testDb.drop();
});

const workload = (name: string) => ({ workspace: 'ws', application: 'app', workload: name, target: 'main' });

async function environmentCounts(environment: string): Promise<{ total: number; succeeded: number; stale: number }> {
  const { body } = await apiGet(hub, '/environments');
  return body.items.find((item: { name: string }) => item.name === environment).reconcilers;
}

/**
 * Runs `body` on a database of its own without a hub — no refresher takes the queue from under the
 * test — with the hub's stale-after published.
 */
async function withoutHub(body: (alone: TestDatabase, database: Database) => Promise<void>): Promise<void> {
  const alone = await createTestDatabase();
  const database = connectDatabase({ url: alone.url, poolSize: 2, connectTimeoutMs: 5_000, applicationName: 'test' }, createLogger('silent'));
  try {
    await publishHubSettings(database.db, { staleAfterMs: STALE_AFTER_MS, environmentOrder: [] });
    await body(alone, database);
  } finally {
    await database.close();
    await alone.drop();
  }
}

describe('summaries kept current on write', () => {
  it('turns a silent reconciler stale at the moment stale-after passes, and back on its next report', async () => {
    const environment = randomName('env');
    const app = workload(randomName('w'));
    const host = randomName('host');
    const fleet = new FleetBuilder(hub.database.db);
    await fleet.write([fleet.descriptor(app, environment, '1.0', 'c1', 5), fleet.state(host, app, environment, 'c1', 'success', 1)]);
    const lastSeen = fleet.ago(1).getTime();

    now = lastSeen + STALE_AFTER_MS - 1_000;
    expect(await environmentCounts(environment)).toMatchObject({ total: 1, succeeded: 1, stale: 0 });
    expect((await apiGet(hub, `/drift?environment=${environment}`)).body.items).toEqual([]);

    // A second later it has been silent for longer than stale-after: the API says so at once.
    now = lastSeen + STALE_AFTER_MS + 1_000;
    expect(await environmentCounts(environment)).toMatchObject({ total: 1, succeeded: 0, stale: 1 });
    const drift = (await apiGet(hub, `/drift?environment=${environment}`)).body;
    expect(drift.items.map((item: { host: string; reasons: string[]; driftingSince: string }) => [item.host, item.reasons, item.driftingSince])).toEqual([
      [host, ['stale'], new Date(lastSeen).toISOString()],
    ]);
    // The views, which Grafana's alerts read, follow with the refresher's next tick.
    await waitFor(
      async () => (await testDb.query<{ stale: number }>('SELECT stale FROM kalypso_environment_state WHERE environment = $1', [environment]))[0]?.stale === 1,
      'kalypso_environment_state to count it stale',
      5_000,
    );
    expect(await testDb.query('SELECT host, reasons FROM kalypso_drift WHERE environment = $1', [environment])).toEqual([{ host, reasons: 'stale' }]);

    // It reports again (the clock the hub judges by is ahead; the report is as of real time).
    now = Date.now() + 1_000;
    await fleet.write([{ ...fleet.state(host, app, environment, 'c1', 'success', 0) }]);
    expect(await environmentCounts(environment)).toMatchObject({ total: 1, succeeded: 1, stale: 0 });
    expect((await apiGet(hub, `/drift?environment=${environment}`)).body.items).toEqual([]);
  });

  it('folds in only what a write touched, and what came due', async () => {
    await withoutHub(async (alone, database) => {
      const environment = randomName('env');
      const apps = [workload(randomName('a')), workload(randomName('b'))];
      const fleet = new FleetBuilder(database.db);
      const at = Date.now();
      await fleet.write([
        ...apps.map((app) => fleet.descriptor(app, environment, '1.0', 'c1', 5)),
        ...apps.flatMap((app) => [fleet.state('h1', app, environment, 'c1', 'success', 1), fleet.state('h2', app, environment, 'c1', 'success', 1)]),
      ]);
      expect(await refreshSummaries(database.db, { wait: true, at: new Date(at) })).toEqual({ reconcilers: 4, hosts: 2 });
      // One reconciler's new status: it and its host, nothing else. (A new commit would also touch every
      // reconciler of the branch: the versions it carries can move their drift.)
      await fleet.write([fleet.state('h1', apps[0]!, environment, 'c1', 'failure', 0)]);
      expect(await refreshSummaries(database.db, { wait: true, at: new Date(at) })).toEqual({ reconcilers: 1, hosts: 1 });
      // Nothing written, nothing due: nothing recomputed.
      expect(await refreshSummaries(database.db, { wait: true, at: new Date(at) })).toEqual({ reconcilers: 0, hosts: 0 });
      // Past stale-after every reconciler comes due, with its host, once.
      const later = new Date(Date.now() + STALE_AFTER_MS + 60_000);
      expect(await refreshSummaries(database.db, { wait: true, at: later })).toEqual({ reconcilers: 4, hosts: 2 });
      expect(await refreshSummaries(database.db, { wait: true, at: later })).toEqual({ reconcilers: 0, hosts: 0 });
      expect(await alone.query('SELECT status, sum(reconcilers)::int AS n FROM endpoint_status_count GROUP BY status')).toEqual([{ status: 'stale', n: 4 }]);
    });
  });

  it('are made current before a report reads them: writes folded in, reconcilers due turned stale, rollouts refreshed when asked', async () => {
    await withoutHub(async (alone, database) => {
      const environment = randomName('env');
      const app = workload(randomName('a'));
      const fleet = new FleetBuilder(database.db);
      const counts = () => alone.query('SELECT status, sum(reconcilers)::int AS n FROM endpoint_status_count GROUP BY status ORDER BY 1');
      const queued = async () =>
        (await alone.query<{ n: number }>(
          'SELECT (SELECT count(*) FROM summary_queue) + (SELECT count(*) FROM current_rollout_count_queue) + (SELECT count(*) FROM rollout_refresh_queue) AS n',
        ))[0]!.n;
      await fleet.write([fleet.descriptor(app, environment, '1.0', 'c1', 5)]);
      await fleet.write([fleet.state('h1', app, environment, 'c1', 'success', 1), fleet.state('h2', app, environment, 'c1', 'failure', 1)]);
      // Queued writes: folded in, the rollouts only when asked for.
      await summariesCurrent(database.db, new Date());
      expect(await counts()).toEqual([{ status: 'failure', n: 1 }, { status: 'success', n: 1 }]);
      expect(await alone.query('SELECT count(*)::int AS n FROM rollout')).toEqual([{ n: 0 }]);
      await summariesCurrent(database.db, new Date(), { rollouts: true });
      expect(await alone.query('SELECT count(*)::int AS n FROM rollout')).toEqual([{ n: 1 }]);
      expect(Number(await queued())).toBe(0);
      // Nothing queued: what comes due by the moment asked about is still folded in.
      await summariesCurrent(database.db, new Date(Date.now() + STALE_AFTER_MS + 60_000));
      expect(await counts()).toEqual([{ status: 'stale', n: 2 }]);
    });
  });

  it('judges a current rollout from the summaries, exact at any stale-after cut between two refreshes', async () => {
    await withoutHub(async (alone, database) => {
      const environment = randomName('env');
      const app = workload(randomName('w'));
      const commit = randomCommit();
      const [live, silent] = [randomName('live'), randomName('silent')];
      const fleet = new FleetBuilder(database.db);
      await fleet.write([fleet.descriptor(app, environment, '1.0', commit, 30)]);
      await fleet.write([fleet.state(live, app, environment, commit, 'success', 5), fleet.state(silent, app, environment, commit, 'success', 15)]);
      await refreshRollouts(database.db, { wait: true });
      const refreshedAt = Date.now();
      await refreshSummaries(database.db, { wait: true, at: new Date(refreshedAt) });
      const verdict = async (cutMinutesAgo: number) => {
        const rows = await alone.query<{ status: string; succeeded: number; stale: number; in_progress: number }>(
          'SELECT status, succeeded, stale, in_progress FROM kalypso_current_rollouts($1, NULL)',
          [new Date(refreshedAt - cutMinutesAgo * 60_000)],
        );
        return rows;
      };
      // The refresh's own cut (10 minutes): one live, one stale.
      expect(await verdict(10)).toEqual([{ status: 'in_progress', succeeded: 1, stale: 1, in_progress: 0 }]);
      // A later cut (Grafana asking six minutes after the refresh): the live one has turned stale too.
      expect(await verdict(4)).toEqual([{ status: 'in_progress', succeeded: 0, stale: 2, in_progress: 0 }]);
      // An earlier cut: the one counted stale is live by it, with its own status.
      expect(await verdict(20)).toEqual([{ status: 'succeeded', succeeded: 2, stale: 0, in_progress: 0 }]);
      // A sign of life from the live one is not queued (nothing counted changes), and its summary row
      // keeps the old last_seen_at: its state decides that a later cut does not make it stale.
      await fleet.write([fleet.state(live, app, environment, commit, 'success', 0)]);
      expect(await alone.query('SELECT count(*)::int AS n FROM summary_queue')).toEqual([{ n: 0 }]);
      expect(await verdict(4)).toEqual([{ status: 'in_progress', succeeded: 1, stale: 1, in_progress: 0 }]);
    });
  });
});
