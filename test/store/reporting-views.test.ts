// The SQL views Grafana reads (schema/0004) say what the API says, for the same fleet, and the
// kalypso_reader role reads them and nothing else.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import { connectDatabase, type Database } from '../../src/store/connect.ts';
import { publishHubSettings } from '../../src/store/hub-settings.ts';
import { driftReport } from '../../src/store/reports/drift-report.ts';
import { hostStateReport } from '../../src/store/reports/hosts-report.ts';
import type { ReportContext } from '../../src/store/reports/report-context.ts';
import { rolloutGateReport } from '../../src/store/reports/rollout-gate-report.ts';
import { targetDeployments } from '../../src/store/reports/target-deployments.ts';
import { ENVIRONMENTS, type FleetBuilder, writeKnownFleet } from '../support/known-fleet.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const STALE_AFTER_MS = 15 * 60_000;
let testDb: TestDatabase;
let database: Database;
let fleet: FleetBuilder;
const context = (): ReportContext => ({ asOf: new Date(), staleAfterMs: STALE_AFTER_MS });

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = connectDatabase({ url: testDb.url, poolSize: 4, connectTimeoutMs: 5_000, applicationName: 'test' }, createLogger('silent'));
  await publishHubSettings(database.db, { staleAfterMs: STALE_AFTER_MS, environmentOrder: [] });
  fleet = await writeKnownFleet(database.db);
});

afterAll(async () => {
  await database.close();
  await testDb.drop();
});

const targetKey = (row: { workspace: string; application: string; workload: string; deployment_target: string; environment: string }) =>
  [row.environment, row.workspace, row.application, row.workload, row.deployment_target].join('|');

describe('reporting views', () => {
  it('kalypso_environment_state matches the environment state report, target by target', async () => {
    const report = await targetDeployments(database.db, context(), ENVIRONMENTS);
    const rows = await testDb.query<Record<string, any>>('SELECT * FROM kalypso_environment_state');
    expect(rows).toHaveLength(report.length);
    const byKey = new Map(rows.map((row) => [targetKey(row as never), row]));
    for (const target of report) {
      const row = byKey.get([target.environment, target.workspace, target.application, target.workload, target.deploymentTarget].join('|'));
      expect(row, target.deploymentTarget).toBeDefined();
      expect({
        desired: row!['desired_version'],
        commit: row!['desired_commit'],
        counts: [row!['reconcilers'], row!['succeeded'], row!['failed'], row!['in_progress'], row!['stale']],
        deployed: String(row!['deployed_versions']).split(', ').filter(Boolean).sort(),
      }).toEqual({
        desired: target.desired?.version ?? null,
        commit: target.desired?.commit ?? null,
        counts: [target.reconcilers.total, target.reconcilers.succeeded, target.reconcilers.failed, target.reconcilers.inProgress, target.reconcilers.stale],
        deployed: target.deployed.map((deployed) => deployed.version ?? deployed.commit.slice(0, 12)).sort(),
      });
    }
    const statusOf = (environment: string, workload: string) => rows.find((row) => row['environment'] === environment && row['workload'] === workload)?.['status'];
    expect(statusOf('dev', 'greeter-api')).toBe('failure');
    expect(statusOf('dev', 'hello-world')).toBe('out_of_date');
    expect(statusOf('staging', 'hello-world')).toBe('stale');
    expect(statusOf('dev', 'cart')).toBe('in_progress');
    expect(statusOf('qa', 'hello-world')).toBe('success');
  });

  it('kalypso_environment_discrepancy lines every environment up in promotion order and flags the changes', async () => {
    const rows = await testDb.query<Record<string, unknown>>(
      `SELECT environment, desired_version, previous_environment, differs_from_previous
         FROM kalypso_environment_discrepancy WHERE workload = 'hello-world' ORDER BY environment_order`,
    );
    expect(rows).toEqual([
      { environment: 'dev', desired_version: '0.0.3', previous_environment: null, differs_from_previous: false },
      { environment: 'qa', desired_version: '0.0.2', previous_environment: 'dev', differs_from_previous: true },
      { environment: 'staging', desired_version: '0.0.2', previous_environment: 'qa', differs_from_previous: false },
      { environment: 'prod', desired_version: '0.0.1', previous_environment: 'staging', differs_from_previous: true },
    ]);
    // greeter-api has no staging target: prod follows qa.
    const greeter = await testDb.query<{ environment: string; previous_environment: string | null }>(
      `SELECT environment, previous_environment FROM kalypso_environment_discrepancy WHERE workload = 'greeter-api' ORDER BY environment_order`,
    );
    expect(greeter.map((row) => [row.environment, row.previous_environment])).toEqual([['dev', null], ['qa', 'dev'], ['prod', 'qa']]);
  });

  it('kalypso_host_state matches the host state report', async () => {
    const hosts = await testDb.query<{ name: string }>('SELECT name FROM host ORDER BY name');
    for (const { name } of hosts) {
      const report = (await hostStateReport(database.db, context(), name))!;
      const rows = await testDb.query<Record<string, unknown>>(
        'SELECT reconciler, applied_commit, status, applied_version, desired_version, environment FROM kalypso_host_state WHERE host = $1 ORDER BY reconciler',
        [name],
      );
      expect(rows, name).toEqual(
        report.reconcilers.map((reconciler) => ({
          reconciler: reconciler.reconciler,
          applied_commit: reconciler.commit,
          status: reconciler.status,
          applied_version: reconciler.deploymentTargets[0]?.deployedVersion ?? null,
          desired_version: reconciler.deploymentTargets[0]?.desiredVersion ?? null,
          environment: reconciler.deploymentTargets[0]?.environment ?? null,
        })),
      );
    }
  });

  it('kalypso_drift matches the drift report, reasons and since when', async () => {
    const report = await driftReport(database.db, context(), undefined);
    const rows = await testDb.query<{ host: string; reconciler: string; environment: string; reasons: string; drifting_since: Date; status: string }>(
      'SELECT host, reconciler, environment, reasons, drifting_since, status FROM kalypso_drift',
    );
    const key = (item: { host: string; reconciler: string; environment: string }) => `${item.environment}|${item.host}|${item.reconciler}`;
    expect(rows.map(key).sort()).toEqual(report.map(key).sort());
    for (const item of report) {
      const row = rows.find((candidate) => key(candidate) === key(item))!;
      expect({ reasons: row.reasons, since: row.drifting_since.toISOString(), status: row.status }).toEqual({
        reasons: item.reasons.join(', '),
        since: item.driftingSince.toISOString(),
        status: item.status,
      });
    }
    expect(report.length).toBeGreaterThan(2);
  });

  it('kalypso_rollout_state judges each target’s desired commit as the rollout gate does', async () => {
    const rows = await testDb.query<{ manifests_endpoint: string; commit_id: string; status: string }>(
      'SELECT manifests_endpoint, commit_id, status FROM kalypso_rollout_state',
    );
    const targets = new Map(rows.map((row) => [`${row.manifests_endpoint} ${row.commit_id}`, row]));
    expect(targets.size).toBe(9);
    for (const { manifests_endpoint: endpoint, commit_id: commit } of targets.values()) {
      const gate = await rolloutGateReport(database.db, context(), endpoint, commit);
      const statuses = rows.filter((row) => row.manifests_endpoint === endpoint && row.commit_id === commit).map((row) => row.status);
      const expected = gate.subscribers.length === 0 ? ['no_subscribers'] : gate.subscribers.map((subscriber) => subscriber.status);
      expect(statuses.sort(), endpoint).toEqual(expected.sort());
    }
  });

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
    await publishHubSettings(database.db, { staleAfterMs: 60 * 60_000, environmentOrder: [] });
    try {
      expect(await testDb.query(staleStaging)).toEqual([{ stale: 0 }]);
      expect((await testDb.query<{ stale_after: unknown }>('SELECT stale_after::text FROM kalypso_settings'))[0]?.stale_after).toBe('01:00:00');
    } finally {
      await publishHubSettings(database.db, { staleAfterMs: STALE_AFTER_MS, environmentOrder: [] });
    }
    expect(fleet.t0).toBeLessThanOrEqual(Date.now());
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
      'kalypso_delivery_laggard',
      'kalypso_delivery_rollout',
      'kalypso_delivery_rollout_history',
      'kalypso_drift',
      'kalypso_environment_discrepancy',
      'kalypso_environment_history',
      'kalypso_environment_state',
      'kalypso_host_state',
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
