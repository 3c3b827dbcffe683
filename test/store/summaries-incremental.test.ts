// The summaries folded in step by step (what changed, by difference) equal the summaries built
// from nothing but the stored states, after any sequence of writes: reports that change status or commit, move a
// reconciler to another environment's endpoint, come in late or go silent past stale-after, new
// desired versions, removed reconcilers — with the clock moving on between refreshes.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NormalizedRecord } from '../../src/model/deployment-records.ts';
import type { Database } from '../../src/store/connect.ts';
import { publishHubSettings } from '../../src/store/hub-settings.ts';
import { refreshRollouts } from '../../src/store/rollout-refresh.ts';
import { refreshSummaries } from '../../src/store/summary-refresh.ts';
import { CART, ENVIRONMENTS, FleetBuilder, GREETER, HELLO } from '../support/known-fleet.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { seededPicker, testSeed } from '../support/seeded-random.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

const STALE_AFTER_MS = 10 * 60_000;
const WORKLOADS = [HELLO, GREETER, CART];
let testDb: TestDatabase;
let database: Database;

// A database per sequence: each starts its clock at now, and summaries assume time moves forward.
beforeEach(async () => {
  ({ testDb, database } = await openTestDatabase(2));
  await publishHubSettings(database.db, { staleAfterMs: STALE_AFTER_MS, environmentOrder: [...ENVIRONMENTS] });
});

afterEach(() => closeTestDatabase({ testDb, database }));

type Query = (text: string, values?: unknown[]) => Promise<unknown[]>;

async function summaries(query: Query, at: Date): Promise<unknown> {
  return {
    // Each current rollout judged at the refresh's own stale-after cut, and at cuts a few minutes
    // either side of it (a caller between two refreshes): the summaries' corrections read the
    // last_seen_at each reconciler was counted by.
    rollouts: await query(
      `SELECT x.minutes, r.*
         FROM unnest('{-3,0,3}'::int[]) AS x(minutes)
        CROSS JOIN LATERAL kalypso_current_rollouts(
                $1::timestamptz - (SELECT stale_after FROM hub_settings) + x.minutes * interval '1 minute', NULL) r
        ORDER BY 1, 2`,
      [at],
    ),
    hosts: await query(
      `SELECT h.name, s.total, s.succeeded, s.failed, s.in_progress, s.stale, s.drifting,
              ARRAY(SELECT e.name FROM unnest(s.environment_ids) x(id) JOIN environment e ON e.id = x.id ORDER BY 1) AS environments
         FROM host_summary s JOIN host h ON h.id = s.host_id ORDER BY 1`,
    ),
    counts: await query(
      `SELECT me.endpoint, c.gitops_commit_id, c.status, c.reconcilers
         FROM endpoint_status_count c JOIN manifests_endpoint me ON me.id = c.manifests_endpoint_id ORDER BY 1, 2, 3`,
    ),
    drift: await query(
      `SELECT d.deployment_target_id, d.reconciler_id, d.not_on_desired_rollout, d.failing, d.stale, d.drifting_since
         FROM drift_item d ORDER BY 1, 2`,
    ),
  };
}

/**
 * The summaries built from nothing but the stored states, in a transaction that is rolled back: the
 * folded ones go on accumulating step after step.
 */
async function rebuiltSummaries(at: Date): Promise<unknown> {
  return await testDb.rolledBack(async (client) => {
    await client.query('TRUNCATE summary_reconciler, endpoint_status_count, drift_item, host_summary');
    await client.query('SELECT kalypso_refresh_summaries(true, $1)', [at]);
    return await summaries(async (text, values) => (await client.query(text, values)).rows, at);
  });
}

/** 1–8 random records: reports (some late), new desired versions, removals. */
function randomRecords(
  random: ReturnType<typeof seededPicker>,
  fleet: FleetBuilder,
  options: { readonly hosts: readonly string[]; readonly commits: readonly string[]; readonly minutesSinceT0: number; readonly at: number },
): NormalizedRecord[] {
  const records: NormalizedRecord[] = [];
  for (let n = 1 + random.int(8); n > 0; n -= 1) {
    const workload = random.pick(WORKLOADS);
    const environment = random.pick(ENVIRONMENTS);
    const kind = random.int(10);
    if (kind < 6) {
      const status = random.pick(['success', 'failure', 'in_progress'] as const);
      records.push(fleet.state(random.pick(options.hosts), workload, environment, random.pick(options.commits), status, random.int(30) - options.minutesSinceT0));
    } else if (kind < 9) {
      records.push(fleet.descriptor(workload, environment, `1.${random.int(4)}`, random.pick(options.commits), random.int(60)));
    } else {
      records.push({ kind: 'reconciler-removed', host: random.pick(options.hosts), reconciler: `flux-system/${workload.workload}`, removedAt: new Date(options.at) });
    }
  }
  return records;
}

describe('summaries folded in step by step', () => {
  // A seed of its own for every run, and the seeds that once found a defect.
  it.each([
    ['a new seed', testSeed()],
    ['seed 917211: a new host whose reconciler came and went besides one that stayed', 917211],
  ])('equal the summaries rebuilt from scratch after every refresh of a random sequence of writes (%s)', async (_, seed) => {
    const random = seededPicker(seed);
    const t0 = Date.now();
    const fleet = new FleetBuilder(database.db, t0);
    const hosts = Array.from({ length: 6 }, () => randomName('host'));
    const commits = Array.from({ length: 4 }, () => randomCommit());
    let clock = t0;
    let rollouts = 0;
    for (let step = 0; step < 30; step += 1) {
      await fleet.write(randomRecords(random, fleet, { hosts, commits, minutesSinceT0: (clock - t0) / 60_000, at: clock }));
      // The clock moves on, now and then past stale-after for some.
      clock += random.int(4) * 60_000;
      const at = new Date(clock);
      await refreshSummaries(database.db, { wait: true, at });
      await refreshRollouts(database.db, { wait: true });
      const folded = await summaries((text, values) => testDb.query(text, values), at);
      expect(folded, `seed ${seed}, step ${step}`).toEqual(await rebuiltSummaries(at));
      rollouts += (folded as { rollouts: unknown[] }).rollouts.length;
    }
    // The verdicts were compared, not only empty lists.
    expect(rollouts).toBeGreaterThan(0);
  }, 120_000);
  it('equal the summaries rebuilt from scratch when the queue is folded in slices, with writes between them', async () => {
    const seed = testSeed();
    const random = seededPicker(seed);
    const t0 = Date.now();
    const fleet = new FleetBuilder(database.db, t0);
    const hosts = Array.from({ length: 6 }, () => randomName('host'));
    const commits = Array.from({ length: 4 }, () => randomCommit());
    let clock = t0;
    let slices = 0;
    for (let step = 0; step < 20; step += 1) {
      // Several writers' statements, so that the queue has several rows for the slices to take; now
      // and then a new version for every target at once (an environment rolling out: one write
      // whose desired states a slice judges a few endpoints at a time), and every target back to one
      // of its versions at random in one statement, as a bulk writer assigns
      // (bench/delivery-refresh.ts): its trigger queues every endpoint in one row.
      for (let writes = 1 + random.int(4); writes > 0; writes -= 1) {
        await fleet.write(randomRecords(random, fleet, { hosts, commits, minutesSinceT0: (clock - t0) / 60_000, at: clock }));
      }
      if (random.int(3) === 0) {
        await fleet.write(WORKLOADS.flatMap((workload) => ENVIRONMENTS.map((environment) => fleet.descriptor(workload, environment, `1.${random.int(4)}`, random.pick(commits), random.int(60)))));
      }
      if (random.int(2) === 0) {
        await testDb.query(`UPDATE deployment_target t
                               SET current_assignment_id = (SELECT a.id FROM deployment_assignment a WHERE a.deployment_target_id = t.id ORDER BY random() LIMIT 1)`);
      }
      clock += random.int(4) * 60_000;
      const at = new Date(clock);
      // The timer's way: slices of at most 1–3 reconcilers (so a new desired state is judged an
      // endpoint or a few at a time), the current rollouts recounted now and then, more writes
      // between slices; the last slice recounts.
      for (let more = true; more; ) {
        const result = await refreshSummaries(database.db, { wait: true, at, maxReconcilers: 1 + random.int(3), recountWhen: (left) => !left || random.int(3) === 0 });
        more = result!.more === true;
        slices += 1;
        if (more && random.int(4) === 0) await fleet.write(randomRecords(random, fleet, { hosts, commits, minutesSinceT0: (clock - t0) / 60_000, at: clock }));
      }
      await refreshRollouts(database.db, { wait: true });
      const folded = await summaries((text, values) => testDb.query(text, values), at);
      expect(folded, `seed ${seed}, step ${step}`).toEqual(await rebuiltSummaries(at));
    }
    // The queue was taken in more slices than steps: slicing was exercised.
    expect(slices).toBeGreaterThan(40);
  }, 180_000);
});
