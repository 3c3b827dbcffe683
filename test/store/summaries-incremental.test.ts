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
import { CART, endpointOf, ENVIRONMENTS, FleetBuilder, GREETER, HELLO } from '../support/known-fleet.ts';
import { randomCommit, randomName } from '../support/random-ids.ts';
import { seededPicker, testSeed } from '../support/seeded-random.ts';
import { closeTestDatabase, openTestDatabase, type TestDatabase } from '../support/test-database.ts';

const STALE_AFTER_MS = 10 * 60_000;
const WORKLOADS = [HELLO, GREETER, CART];
const TYPES = ['flux', 'argocd', 'arc'] as const;
let testDb: TestDatabase;
let database: Database;

// A database per sequence: each starts its clock at now, and summaries assume time moves forward.
beforeEach(async () => {
  ({ testDb, database } = await openTestDatabase(2));
  await publishHubSettings(database.db, { staleAfterMs: STALE_AFTER_MS, environmentOrder: [...ENVIRONMENTS] });
});

afterEach(() => closeTestDatabase({ testDb, database }));

type FoldedSummaries = { rollouts: unknown[]; hosts: { name: string; reconciler_types: string[] }[]; typesOfStates: unknown[] };
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
              ARRAY(SELECT e.name FROM unnest(s.environment_ids) x(id) JOIN environment e ON e.id = x.id ORDER BY 1) AS environments,
              s.reconciler_types
         FROM host_summary s JOIN host h ON h.id = s.host_id ORDER BY 1`,
    ),
    // The types as the hosts report read them before they were kept (schema/0037): of the host's
    // current states, recounted here from the stored states alone, not by the refresh's code.
    typesOfStates: await query(
      `SELECT h.name, ARRAY(SELECT DISTINCT r.type FROM deployment_state s JOIN reconciler r ON r.id = s.reconciler_id
                             WHERE s.host_id = h.id ORDER BY 1) AS reconciler_types
         FROM host h WHERE EXISTS (SELECT 1 FROM host_summary s WHERE s.host_id = h.id) ORDER BY 1`,
    ),
    counts: await query(
      `SELECT me.endpoint, c.gitops_commit_id, c.status, c.reconcilers
         FROM endpoint_status_count c JOIN manifests_endpoint me ON me.id = c.manifests_endpoint_id ORDER BY 1, 2, 3`,
    ),
    drift: await query(
      `SELECT d.deployment_target_id, d.reconciler_id, d.not_on_desired_rollout, d.failing, d.stale, d.drifting_since
         FROM drift_item d ORDER BY 1, 2`,
    ),
    // Kept by difference as the counts above move, and recounted where a target came or moved
    // (schema/0050); rebuilt, every environment is recounted. An environment without a row counts zero.
    environments: await query(
      `SELECT e.name, coalesce(s.targets, 0) AS targets, coalesce(s.hosts, 0) AS hosts, coalesce(s.total, 0) AS total,
              coalesce(s.succeeded, 0) AS succeeded, coalesce(s.failed, 0) AS failed,
              coalesce(s.in_progress, 0) AS in_progress, coalesce(s.stale, 0) AS stale
         FROM environment e LEFT JOIN environment_summary s ON s.environment_id = e.id ORDER BY 1`,
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
    // (TRUNCATE moves no environment's counts: they are recounted from what was rebuilt.)
    await client.query('TRUNCATE environment_summary');
    await client.query('SELECT kalypso_count_environments(true)');
    return await summaries(async (text, values) => (await client.query(text, values)).rows, at);
  });
}

/** Where GREETER's target of an environment moves to and from, when targets move. */
const annexOf = (environment: string) => endpointOf(environment, 'greeter-annex', GREETER.target);

/** Another workload whose targets are on HELLO's endpoints: a reconciler of them serves two targets, and can drift from both. */
const SIDECAR = { ...HELLO, workload: 'hello-sidecar' };

describe('summaries folded in step by step', () => {
  // A seed of its own for every run, and the seeds that once found a defect. With `shared`, each of
  // HELLO's descriptors comes with one of SIDECAR's on the same endpoint; with `moving`, GREETER's
  // targets move now and then to an annex endpoint of their environment and back, which hosts of
  // its own report on (no other draw changes).
  it.each([
    ['a new seed', testSeed(), { shared: false, moving: false }],
    ['a new seed, two workloads’ targets on each of HELLO’s endpoints', testSeed(), { shared: true, moving: false }],
    ['a new seed, GREETER’s targets moving between endpoints', testSeed(), { shared: false, moving: true }],
    ['seed 917211: a new host whose reconciler came and went besides one that stayed', 917211, { shared: false, moving: false }],
  ])('equal the summaries rebuilt from scratch after every refresh of a random sequence of writes (%s)', async (_, seed, { shared, moving }) => {
    const random = seededPicker(seed);
    const t0 = Date.now();
    const fleet = new FleetBuilder(database.db, t0);
    const hosts = Array.from({ length: 6 }, () => randomName('host'));
    const annexHosts = Array.from({ length: 2 }, () => randomName('annex'));
    const commits = Array.from({ length: 4 }, () => randomCommit());
    let clock = t0;
    let rollouts = 0;
    for (let step = 0; step < 30; step += 1) {
      const records: NormalizedRecord[] = [];
      for (let n = 1 + random.int(8); n > 0; n -= 1) {
        // (Moving, GREETER is drawn half the time, and in one environment: its target moves often.)
        const workload = moving && random.int(2) === 0 ? GREETER : random.pick(WORKLOADS);
        const environment = moving && workload === GREETER ? 'prod' : random.pick(ENVIRONMENTS);
        const kind = random.int(10);
        if (kind < 6) {
          const status = random.pick(['success', 'failure', 'in_progress'] as const);
          const state = fleet.state(random.pick(hosts), workload, environment, random.pick(commits), status, random.int(30) - (clock - t0) / 60_000);
          if (moving && state.kind === 'real-state' && workload === GREETER && random.int(2) === 0) {
            records.push({ ...state, host: { name: random.pick(annexHosts), type: undefined }, manifests: { ...state.manifests, endpoint: annexOf(environment) } });
            continue;
          }
          // Now and then a reconciler's newest report gives it another type (its host's types change).
          records.push(state.kind === 'real-state' && random.int(3) === 0 ? { ...state, reconciler: { ...state.reconciler, type: random.pick(TYPES) } } : state);
        } else if (kind < 9) {
          const [version, commit, minutesAgo] = [`1.${random.int(4)}`, random.pick(commits), random.int(60)];
          // Moving, GREETER's target goes to the annex or back, leaving one endpoint's reconcilers (their
          // drift) and hosts (their environments). A new commit assigned lately: the assignment is new
          // and often the target's newest, which moves the target.
          if (moving && workload === GREETER) {
            const endpoint = random.int(2) === 0 ? annexOf(environment) : undefined;
            records.push(fleet.descriptor(workload, environment, version, randomCommit(), minutesAgo - (clock - t0) / 60_000, endpoint));
            continue;
          }
          records.push(fleet.descriptor(workload, environment, version, commit, minutesAgo));
          if (shared && workload === HELLO) records.push(fleet.descriptor(SIDECAR, environment, version, commit, minutesAgo, endpointOf(environment, HELLO.workload, HELLO.target)));
        } else {
          records.push({ kind: 'reconciler-removed', host: random.pick(hosts), reconciler: `flux-system/${workload.workload}`, removedAt: new Date(clock) });
        }
      }
      await fleet.write(records);
      // The clock moves on, now and then past stale-after for some.
      clock += random.int(4) * 60_000;
      const at = new Date(clock);
      await refreshSummaries(database.db, { wait: true, at });
      await refreshRollouts(database.db, { wait: true });
      const folded = (await summaries((text, values) => testDb.query(text, values), at)) as FoldedSummaries;
      expect(folded, `seed ${seed}, step ${step}`).toEqual(await rebuiltSummaries(at));
      expect(folded.hosts.map(({ name, reconciler_types }) => ({ name, reconciler_types })), `seed ${seed}, step ${step}`).toEqual(folded.typesOfStates);
      rollouts += folded.rollouts.length;
    }
    // The verdicts were compared, not only empty lists.
    expect(rollouts).toBeGreaterThan(0);
  }, 120_000);
});
