// The known fleet's state said the same way by the API and by the SQL views Grafana reads — both
// read the one definition of each rule in the database (schema/0012) — checked against what the
// fleet implies, not against each other; and the kalypso_reader role reads the views and nothing
// else.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { publishHubSettings } from '../../src/store/hub-settings.ts';
import { apiGet } from '../support/api-get.ts';
import { ENVIRONMENTS, type FleetBuilder, writeKnownFleet } from '../support/known-fleet.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { startTestHub } from '../support/test-hub.ts';
import { waitFor } from '../support/wait-for.ts';

const STALE_AFTER_MS = 15 * 60_000;
let testDb: TestDatabase;
let hub: RunningHub;
let fleet: FleetBuilder;

beforeAll(async () => {
  testDb = await createTestDatabase();
  hub = await startTestHub(testDb.url, ['--stale-after', '15m']);
  fleet = await writeKnownFleet(hub.database.db);
  // The views read the summaries as the hub's refresher left them (the API folds the queue in itself).
  await waitFor(async () => (await testDb.query<{ n: number }>('SELECT count(*)::int AS n FROM summary_queue'))[0]!.n === 0, 'the refresher caught up', 10_000);
});

afterAll(async () => {
  await hub.stop();
  await testDb.drop();
});

/** Expected minutes before t0 as the view and the API write it. */
const iso = (minutes: number) => fleet.ago(minutes).toISOString();

// What the known fleet implies (test/support/known-fleet.ts; stale after 15 minutes), target by
// target: reconcilers total / succeeded / failed / in progress / stale, the versions they run, and
// the target at a glance as kalypso_environment_state says it.
const TARGETS: [environment: string, workload: string, counts: number[], deployed: string[], status: string][] = [
  ['dev', 'hello-world', [2, 2, 0, 0, 0], ['0.0.2', '0.0.3'], 'out_of_date'],
  ['dev', 'greeter-api', [2, 1, 1, 0, 0], ['2.0.0'], 'failure'],
  ['dev', 'cart', [2, 1, 0, 1, 0], ['5.1'], 'in_progress'],
  ['qa', 'hello-world', [1, 1, 0, 0, 0], ['0.0.2'], 'success'],
  ['qa', 'greeter-api', [1, 1, 0, 0, 0], ['2.0.0'], 'success'],
  ['staging', 'hello-world', [1, 0, 0, 0, 1], ['0.0.2'], 'stale'],
  ['prod', 'hello-world', [3, 2, 0, 0, 1], ['0.0.1'], 'stale'],
  ['prod', 'greeter-api', [1, 1, 0, 0, 0], ['1.9.0'], 'success'],
  ['prod', 'cart', [1, 1, 0, 0, 0], ['5.1'], 'success'],
];

// Drift, longest first: host, workload, environment, reasons, since (minutes before t0).
const DRIFT: [host: string, workload: string, environment: string, reasons: string, since: number][] = [
  // On c-dev-2 since 105 minutes; out of date since 0.0.3's rollout began, 60 minutes ago.
  ['dev-2', 'hello-world', 'dev', 'not_on_desired_commit', 60],
  ['staging-1', 'hello-world', 'staging', 'stale', 40],
  ['dev-2', 'greeter-api', 'dev', 'failing', 30],
  ['prod-3', 'hello-world', 'prod', 'stale', 20],
];

// Each reconciler's status, host by host.
const HOSTS: Record<string, Record<string, string>> = {
  'dev-1': { 'hello-world': 'success', 'greeter-api': 'success', cart: 'success' },
  'dev-2': { 'hello-world': 'success', 'greeter-api': 'failure', cart: 'in_progress' },
  'qa-1': { 'hello-world': 'success', 'greeter-api': 'success' },
  'staging-1': { 'hello-world': 'stale' },
  'prod-1': { 'hello-world': 'success', 'greeter-api': 'success' },
  'prod-2': { 'hello-world': 'success' },
  'prod-3': { 'hello-world': 'stale' },
  'edge-store-7': { cart: 'success' },
};

// Each target's desired commit judged by the rollout gate: its subscribers' statuses, sorted.
const GATES: [environment: string, workload: string, statuses: string[]][] = [
  ['dev', 'hello-world', ['in_progress', 'success']],
  ['dev', 'greeter-api', ['failure', 'success']],
  ['dev', 'cart', ['in_progress', 'success']],
  ['qa', 'hello-world', ['success']],
  ['qa', 'greeter-api', ['success']],
  ['staging', 'hello-world', ['stale']],
  ['prod', 'hello-world', ['stale', 'success', 'success']],
  ['prod', 'greeter-api', ['success']],
  ['prod', 'cart', ['success']],
];

const workloadOf = (reconciler: string) => reconciler.replace('flux-system/', '');

describe('the known fleet, through the API and through the views', () => {
  it('environment state: each target’s counts and deployed versions', async () => {
    const rows = await testDb.query<Record<string, any>>('SELECT * FROM kalypso_environment_state ORDER BY environment_order, workload');
    const fromView = rows.map((row) => [
      row['environment'],
      row['workload'],
      [row['reconcilers'], row['succeeded'], row['failed'], row['in_progress'], row['stale']],
      String(row['deployed_versions']).split(', ').sort(),
      row['status'],
    ]);
    expect(new Set(fromView.map((row) => JSON.stringify(row)))).toEqual(new Set(TARGETS.map((row) => JSON.stringify(row))));
    for (const environment of ENVIRONMENTS) {
      const { body } = await apiGet(hub, `/environments/${environment}/state`);
      const fromApi = body.items.map((item: any) => [
        environment,
        item.workload,
        [item.reconcilers.total, item.reconcilers.succeeded, item.reconcilers.failed, item.reconcilers.inProgress, item.reconcilers.stale],
        item.deployed.map((deployed: any) => deployed.version).sort(),
      ]);
      const expected = TARGETS.filter((row) => row[0] === environment).map((row) => row.slice(0, 4));
      expect(new Set(fromApi.map((row: unknown) => JSON.stringify(row))), environment).toEqual(new Set(expected.map((row) => JSON.stringify(row))));
      // The environment's totals, over every page.
      const total = expected.reduce((sum, row) => sum + (row[2] as number[])[0]!, 0);
      expect(body.totals, environment).toMatchObject({ deploymentTargets: expected.length, reconcilers: { total } });
    }
  });

  it('drift: who, why and since when, longest first', async () => {
    const rows = await testDb.query<{ host: string; workload: string; environment: string; reasons: string; drifting_since: Date }>(
      'SELECT host, workload, environment, reasons, drifting_since FROM kalypso_drift ORDER BY drifting_since',
    );
    const expected = DRIFT.map(([host, workload, environment, reasons, since]) => [host, workload, environment, reasons, iso(since)]);
    expect(rows.map((row) => [row.host, row.workload, row.environment, row.reasons, row.drifting_since.toISOString()])).toEqual(expected);
    const { body } = await apiGet(hub, '/drift');
    expect(body.items.map((item: any) => [item.host, item.workload, item.environment, item.reasons.join(', '), item.driftingSince])).toEqual(expected);
    expect(body.totals).toEqual({ drifting: 4, notOnDesiredCommit: 1, failing: 1, stale: 2 });
  });

  it('host state: reported_problem is the reconciler’s own report of a failure or of progress', async () => {
    const rows = await testDb.query<{ status: string; reported_status: string; reported_problem: boolean }>(
      'SELECT status, reported_status, reported_problem FROM kalypso_host_state',
    );
    expect(rows.map((row) => row.reported_problem)).toEqual(rows.map((row) => row.reported_status !== 'success'));
    // Every reconciler judged failing or in progress is among them (the Reconcilers panel asks for them so).
    const problems = rows.filter((row) => row.status === 'failure' || row.status === 'in_progress');
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((row) => row.reported_problem)).toBe(true);
  });

  it('host state: each reconciler’s status, and per host', async () => {
    for (const [host, statuses] of Object.entries(HOSTS)) {
      const rows = await testDb.query<{ reconciler: string; status: string }>('SELECT reconciler, status FROM kalypso_host_state WHERE host = $1', [host]);
      expect(Object.fromEntries(rows.map((row) => [workloadOf(row.reconciler), row.status])), host).toEqual(statuses);
      const { body } = await apiGet(hub, `/hosts/${host}/state`);
      expect(Object.fromEntries(body.reconcilers.map((r: any) => [workloadOf(r.reconciler), r.status])), host).toEqual(statuses);
      // Summed per host, as kalypso_host_summary and GET /hosts have it.
      const count = (status: string) => Object.values(statuses).filter((value) => value === status).length;
      const drifting = DRIFT.filter(([drifted, , , reasons]) => drifted === host && reasons.includes('not_on_desired_commit')).length;
      const expected = { reconcilers: Object.keys(statuses).length, succeeded: count('success'), failed: count('failure'), in_progress: count('in_progress'), stale: count('stale'), drifting };
      const [summary] = await testDb.query<Record<string, unknown>>(
        'SELECT reconcilers, succeeded, failed, in_progress, stale, drifting FROM kalypso_host_summary WHERE host = $1',
        [host],
      );
      expect(summary, host).toEqual(expected);
      const listed = (await apiGet(hub, `/hosts?q=${host}`)).body.items.find((item: any) => item.name === host);
      expect({ ...listed.reconcilers, drifting: listed.drifting }, host).toEqual({
        total: expected.reconcilers,
        succeeded: expected.succeeded,
        failed: expected.failed,
        inProgress: expected.in_progress,
        stale: expected.stale,
        drifting,
      });
    }
  });

  it('rollout state: each target’s desired commit judged as the gate judges it', async () => {
    const rows = await testDb.query<{ environment: string; workload: string; manifests_endpoint: string; commit_id: string; status: string }>(
      'SELECT environment, workload, manifests_endpoint, commit_id, status FROM kalypso_rollout_state',
    );
    for (const [environment, workload, statuses] of GATES) {
      const mine = rows.filter((row) => row.environment === environment && row.workload === workload);
      expect(mine.map((row) => row.status).sort(), `${environment}/${workload}`).toEqual(statuses);
      const { body } = await apiGet(hub, `/deployment-state?manifestsEndpoint=${encodeURIComponent(mine[0]!.manifests_endpoint)}&commit=${mine[0]!.commit_id}`);
      expect(body.subscribers.map((subscriber: any) => subscriber.status).sort(), `${environment}/${workload}`).toEqual(statuses);
    }
  });

});

describe('reporting views', () => {
  it('kalypso_environment_history and kalypso_assignment_history name every row', async () => {
    const [history] = await testDb.query<{ n: number; named: number }>(
      'SELECT count(*)::int AS n, count(environment)::int AS named FROM kalypso_environment_history',
    );
    const [stored] = await testDb.query<{ n: number }>('SELECT count(*)::int AS n FROM deployment_state_history');
    expect(history).toEqual({ n: stored!.n, named: stored!.n });
    const assignments = await testDb.query<{ environment: string; version: string; is_current: boolean }>(
      `SELECT environment, version, is_current FROM kalypso_assignment_history WHERE workload = 'hello-world' AND environment = 'dev' ORDER BY assigned_at`,
    );
    expect(assignments).toEqual([
      { environment: 'dev', version: '0.0.2', is_current: false },
      { environment: 'dev', version: '0.0.3', is_current: true },
    ]);
  });

  it('judges staleness by the stale-after setting the hub published', async () => {
    const staleStaging = `SELECT stale FROM kalypso_environment_state WHERE environment = 'staging'`;
    expect(await testDb.query(staleStaging)).toEqual([{ stale: 1 }]);
    await publishHubSettings(hub.database.db, { staleAfterMs: 60 * 60_000, environmentOrder: [] });
    try {
      expect(await testDb.query(staleStaging)).toEqual([{ stale: 0 }]);
      expect((await testDb.query<{ stale_after: unknown }>('SELECT stale_after::text FROM kalypso_settings'))[0]?.stale_after).toBe('01:00:00');
    } finally {
      await publishHubSettings(hub.database.db, { staleAfterMs: STALE_AFTER_MS, environmentOrder: [] });
    }
    expect(fleet.t0).toBeLessThanOrEqual(Date.now());
  });

  it('publishes the alert thresholds, their defaults unless given', async () => {
    const thresholds = 'SELECT rollout_window::text, off_commit_after::text FROM kalypso_settings';
    expect(await testDb.query(thresholds)).toEqual([{ rollout_window: '00:30:00', off_commit_after: '01:00:00' }]);
    await publishHubSettings(hub.database.db, { staleAfterMs: STALE_AFTER_MS, environmentOrder: [], rolloutWindowMs: 45 * 60_000, offCommitAfterMs: 2 * 3_600_000 });
    try {
      expect(await testDb.query(thresholds)).toEqual([{ rollout_window: '00:45:00', off_commit_after: '02:00:00' }]);
    } finally {
      await publishHubSettings(hub.database.db, { staleAfterMs: STALE_AFTER_MS, environmentOrder: [] });
    }
    expect(await testDb.query(thresholds)).toEqual([{ rollout_window: '00:30:00', off_commit_after: '01:00:00' }]);
  });

  it('lets kalypso_reader read the views and nothing else', async () => {
    const asReader = async (statement: string): Promise<string> => {
      try {
        await testDb.query(`BEGIN; SET LOCAL ROLE kalypso_reader; ${statement}; COMMIT`);
        return 'ok';
      } catch (error) {
        return (error as Error).message;
      }
    };
    const views = await testDb.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.role_table_grants WHERE grantee = 'kalypso_reader' ORDER BY table_name`,
    );
    expect(views.map((view) => view.table_name)).toEqual([
      'kalypso_assignment_history',
      'kalypso_current_rollout',
      'kalypso_delivery_laggard',
      'kalypso_delivery_rollout',
      'kalypso_delivery_rollout_history',
      'kalypso_drift',
      'kalypso_environment_discrepancy',
      'kalypso_environment_history',
      'kalypso_environment_state',
      'kalypso_host_state',
      'kalypso_host_summary',
      'kalypso_off_desired_commit',
      'kalypso_polled_source',
      'kalypso_rollout_event',
      'kalypso_rollout_state',
      'kalypso_settings',
    ]);
    for (const view of views) expect(await asReader(`SELECT * FROM ${view.table_name} LIMIT 1`), view.table_name).toBe('ok');
    expect(await asReader('SELECT * FROM deployment_state')).toMatch(/permission denied for table deployment_state/);
    expect(await asReader('SELECT * FROM kalypso_deployment_target')).toMatch(/permission denied/);
    expect(await asReader('SELECT * FROM environment_in_order')).toMatch(/permission denied/);
    expect(await asReader('UPDATE hub_settings SET stale_after = interval \'1 second\'')).toMatch(/permission denied/);
    // kalypso_settings is an updatable view: only the missing grant stops the reader.
    expect(await asReader('DELETE FROM kalypso_settings')).toMatch(/permission denied for view kalypso_settings/);
    expect(await asReader('SELECT kalypso_drop_history_before(now())')).toMatch(/permission denied for function kalypso_drop_history_before/);
    expect(await asReader("SELECT kalypso_ensure_history_partitions(now(), now() + interval '1 year')")).toMatch(/permission denied for function/);
    expect(await asReader("SELECT kalypso_refresh_rollouts('{}', '{}', '{}')")).toMatch(/permission denied for function kalypso_refresh_rollouts/);
    expect(await asReader('SELECT * FROM rollout')).toMatch(/permission denied for table rollout/);
    // The summaries and their definitions (schema/0012) are read through the views only.
    for (const table of ['summary_queue', 'summary_reconciler', 'endpoint_status_count', 'drift_item', 'host_summary', 'target_deployment']) {
      expect(await asReader(`SELECT * FROM ${table}`), table).toMatch(/permission denied/);
    }
    expect(await asReader('SELECT * FROM kalypso_refresh_summaries()')).toMatch(/permission denied for function kalypso_refresh_summaries/);
    expect(await asReader("SELECT * FROM kalypso_judge_drift('{}', now())")).toMatch(/permission denied for function kalypso_judge_drift/);
    // The promotion flow's tables and writing functions (schema/0010) are the hub's alone.
    for (const table of ['target_commit', 'commit_succession', 'endpoint_commit', 'endpoint_peer']) {
      expect(await asReader(`SELECT * FROM ${table}`), table).toMatch(/permission denied/);
    }
    for (const call of [
      "kalypso_carry_forward('{}', '{}')",
      "kalypso_commits_seen('{}', '{}', '{}', '{}', '{}', '{}', '{}')",
      'kalypso_assignment_added(1)',
      "kalypso_adopt_assignments('{}')",
      "kalypso_number_rollouts('{}')",
    ]) {
      expect(await asReader(`SELECT ${call}`), call).toMatch(/permission denied for function/);
    }
    // The delivery definitions (schema/0013): the reader calls them; their building blocks and every
    // other role may not (they run with the owner's rights).
    for (const name of ['totals', 'outcomes', 'trend', 'laggards', 'rollouts']) {
      expect(await asReader(`SELECT * FROM kalypso_delivery_${name}(now() - interval '1 day', now())`), name).toBe('ok');
    }
    for (const call of [
      "kalypso_delivery_window(now(), now(), NULL, NULL, NULL, NULL, NULL, NULL, 0)",
      "kalypso_delivery_window_laggards(now(), now(), NULL, NULL, NULL, NULL, NULL, NULL)",
      "kalypso_delivery_slice(NULL, NULL, NULL, NULL, NULL, NULL)",
    ]) {
      expect(await asReader(`SELECT * FROM ${call}`), call).toMatch(/permission denied for function/);
    }
    // A role of its own, created and dropped in one transaction that never commits.
    const asOtherRole = async (statement: string): Promise<string> => {
      try {
        await testDb.query(`BEGIN; CREATE ROLE kalypso_test_stranger; SET LOCAL ROLE kalypso_test_stranger; ${statement}; ROLLBACK`);
        return 'ok';
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(await asOtherRole('SELECT * FROM kalypso_delivery_totals()')).toMatch(/permission denied for function kalypso_delivery_totals/);
  });
});
