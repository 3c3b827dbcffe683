// A synthetic fleet written straight into the schema with SQL (seconds, not hours, for millions
// of rows), shaped like the reports expect a real one: workspaces → applications → workloads with
// deployment targets in every environment, hosts per environment whose reconcilers pull those
// targets, a history of transitions per reconciler, and some lag, failure and silence.
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { HubDatabase } from '../src/store/database-schema.ts';
import { progress } from './bench-report.ts';
import { refreshEveryRollout } from '../test/support/rollout-recount.ts';

export interface FleetSize {
  readonly name: string;
  readonly environments: readonly string[];
  readonly workspaces: number;
  readonly applicationsPerWorkspace: number;
  readonly workloadsPerApplication: number;
  readonly targetsPerWorkloadPerEnvironment: number;
  readonly hosts: number;
  readonly reconcilersPerHost: number;
  /** History rows per reconciler; every fourth step is a new version. */
  readonly transitionsPerReconciler: number;
}

/** The S fleet of the issues: 2,000 hosts, 24,000 reconcilers, 480,000 history rows, 1,200 targets. */
export const FLEET_S: FleetSize = {
  name: 'S',
  environments: ['dev', 'qa', 'prod'],
  workspaces: 4,
  applicationsPerWorkspace: 5,
  workloadsPerApplication: 5,
  targetsPerWorkloadPerEnvironment: 4,
  hosts: 2_000,
  reconcilersPerHost: 12,
  transitionsPerReconciler: 20,
};

/** L, ten times S: 20,000 hosts, 240,000 reconcilers, 4.8 M history rows, 12,000 targets. */
export const FLEET_L: FleetSize = {
  name: 'L',
  environments: ['dev', 'qa', 'prod'],
  workspaces: 10,
  applicationsPerWorkspace: 10,
  workloadsPerApplication: 10,
  targetsPerWorkloadPerEnvironment: 4,
  hosts: 20_000,
  reconcilersPerHost: 12,
  transitionsPerReconciler: 20,
};

export const fleetEndpoint = (environment: string, workload: number, target: number): string =>
  `https://github.com/contoso/fleet-gitops/${environment}/w${workload}-t${target}`;

// Commit ids as git prints them, which do not sort in version order; FLEET_COMMIT_SQL makes the
// same id in SQL from the version `v`.
export const versionCommit = (version: number): string => createHash('sha256').update(`fleet-version-${version}`).digest('hex').slice(0, 40);
const FLEET_COMMIT_SQL = sql`left(encode(sha256(convert_to('fleet-version-' || v, 'UTF8')), 'hex'), 40)`;

export async function generateFleet(db: Kysely<HubDatabase>, size: FleetSize, t0: Date): Promise<void> {
  const workloads = size.workspaces * size.applicationsPerWorkspace * size.workloadsPerApplication;
  const targetsPerEnvironment = workloads * size.targetsPerWorkloadPerEnvironment;
  const versions = Math.ceil(size.transitionsPerReconciler / 4);
  const step = (name: string) => progress(`fleet ${size.name}: ${name}`);

  step('workspaces, applications, workloads, environments');
  await sql`INSERT INTO workspace (name) SELECT 'ws' || i FROM generate_series(0, ${size.workspaces - 1}) i`.execute(db);
  await sql`INSERT INTO application (workspace_id, name)
            SELECT ws.id, 'app' || a FROM workspace ws, generate_series(0, ${size.applicationsPerWorkspace - 1}) a`.execute(db);
  await sql`INSERT INTO workload (application_id, name)
            SELECT ap.id, 'w' || (row_number() OVER (ORDER BY ap.id, w) - 1)
              FROM application ap, generate_series(0, ${size.workloadsPerApplication - 1}) w`.execute(db);
  // In promotion order, as a write that saw them in this order would rank them (schema/0009).
  for (const [rank, environment] of size.environments.entries()) {
    await sql`INSERT INTO environment (name, first_seen_rank) VALUES (${environment}, ${rank})`.execute(db);
  }

  step(`${targetsPerEnvironment * size.environments.length} deployment targets with ${versions} versions each`);
  await sql`
    INSERT INTO manifests_endpoint (endpoint)
    SELECT 'https://github.com/contoso/fleet-gitops/' || e.name || '/' || w.name || '-t' || t
      FROM environment e, workload w, generate_series(0, ${size.targetsPerWorkloadPerEnvironment - 1}) t`.execute(db);
  await sql`
    INSERT INTO deployment_target (workload_id, environment_id, name, manifests_endpoint_id)
    SELECT w.id, e.id, 't' || t, me.id
      FROM environment e, workload w, generate_series(0, ${size.targetsPerWorkloadPerEnvironment - 1}) t,
           manifests_endpoint me
     WHERE me.endpoint = 'https://github.com/contoso/fleet-gitops/' || e.name || '/' || w.name || '-t' || t`.execute(db);
  await sql`
    INSERT INTO workload_version (workload_id, version, build, build_time)
    SELECT w.id, '1.' || v || '.0', 'build-' || v, ${t0}::timestamptz - make_interval(mins => (${versions} - v) * 120 + 30)
      FROM workload w, generate_series(0, ${versions - 1}) v`.execute(db);
  await sql`
    INSERT INTO deployment_assignment (deployment_target_id, workload_version_id, gitops_commit_id, assigned_at)
    SELECT t.id, wv.id, ${FLEET_COMMIT_SQL},
           ${t0}::timestamptz - make_interval(mins => (${versions} - v) * 120)
      FROM deployment_target t
      JOIN generate_series(0, ${versions - 1}) v ON true
      JOIN workload_version wv ON wv.workload_id = t.workload_id AND wv.version = '1.' || v || '.0'`.execute(db);
  await sql`
    UPDATE deployment_target t SET current_assignment_id = (
      SELECT a.id FROM deployment_assignment a WHERE a.deployment_target_id = t.id ORDER BY a.assigned_at DESC LIMIT 1)`.execute(db);
  // Written in bulk, not through the writer: rollouts, commit order and versions as the writer keeps them.
  await sql`SELECT kalypso_adopt_assignments(array_agg(id)) FROM deployment_target`.execute(db);

  step(`${size.hosts} hosts with ${size.reconcilersPerHost} reconcilers each`);
  await sql`
    INSERT INTO host (name, type, first_seen_at, last_seen_at)
    SELECT 'host-' || lpad(h::text, 5, '0'), CASE WHEN h % 10 = 0 THEN 'edge-device' ELSE 'k8s-cluster' END,
           ${t0}::timestamptz - interval '30 days',
           CASE WHEN h % 33 = 0 THEN ${t0}::timestamptz - interval '1 day' ELSE ${t0}::timestamptz - make_interval(secs => h % 300) END
      FROM generate_series(0, ${size.hosts - 1}) h`.execute(db);
  // Host h serves environment h mod E; its reconciler j pulls target (h·R + j) mod T of it.
  await sql`
    WITH targets AS (
      SELECT dt.manifests_endpoint_id, array_position(${[...size.environments]}::text[], e.name) - 1 AS environment,
             row_number() OVER (PARTITION BY e.id ORDER BY dt.id) - 1 AS position
        FROM deployment_target dt JOIN environment e ON e.id = dt.environment_id
    )
    INSERT INTO reconciler (host_id, name, type, manifests_endpoint_id)
    SELECT host.id, 'flux-system/r' || j, 'flux', t.manifests_endpoint_id
      FROM host
      JOIN generate_series(0, ${size.reconcilersPerHost - 1}) j ON true
      JOIN targets t ON t.environment = (host.id - 1) % ${size.environments.length}
                    AND t.position = ((host.id - 1) * ${size.reconcilersPerHost} + j) % ${targetsPerEnvironment}`.execute(db);

  step(`${size.hosts * size.reconcilersPerHost * size.transitionsPerReconciler} history rows`);
  // Step s of a reconciler: version s/4, statuses in_progress, failure, in_progress, success.
  // 5 % of reconcilers lag one version behind, 2 % end failing; hosts h % 33 = 0 are silent.
  await sql`
    INSERT INTO deployment_state_history (reconciler_id, manifests_endpoint_id, gitops_commit_id, status, status_message, observed_at, received_at)
    SELECT r.id, r.manifests_endpoint_id, ${FLEET_COMMIT_SQL},
           (CASE WHEN s = last AND r.id % 50 = 0 THEN 'failure'
                 ELSE (ARRAY['in_progress', 'failure', 'in_progress', 'success'])[s % 4 + 1] END)::deployment_status,
           CASE WHEN s % 4 = 1 OR (s = last AND r.id % 50 = 0) THEN 'Health check failed after 5m0s' ELSE 'Applied revision' END,
           ts, ts
      FROM reconciler r
      JOIN host ON host.id = r.host_id
      CROSS JOIN LATERAL (SELECT CASE WHEN r.id % 20 = 0 THEN ${size.transitionsPerReconciler - 5}::int ELSE ${size.transitionsPerReconciler - 1}::int END AS last) l
      CROSS JOIN LATERAL generate_series(0, l.last) s
      CROSS JOIN LATERAL (SELECT s / 4 AS v,
                                 CASE WHEN host.id % 33 = 1 THEN ${t0}::timestamptz - interval '1 day' ELSE ${t0}::timestamptz END
                                 - make_interval(mins => (l.last - s) * 30 + 1) AS ts) x`.execute(db);

  step('current state');
  await sql`
    INSERT INTO deployment_state (reconciler_id, host_id, manifests_endpoint_id, gitops_commit_id, status, status_message,
                                  observed_at, last_observed_at, last_received_at)
    SELECT DISTINCT ON (h.reconciler_id) h.reconciler_id, r.host_id, h.manifests_endpoint_id, h.gitops_commit_id, h.status,
           h.status_message, h.observed_at, h.observed_at + interval '1 minute', h.observed_at + interval '1 minute'
      FROM deployment_state_history h JOIN reconciler r ON r.id = h.reconciler_id
     ORDER BY h.reconciler_id, h.observed_at DESC`.execute(db);
  // What the hub keeps up to date as it writes (schema/0008), computed here in one go.
  step('rollouts (delivery metrics)');
  await sql.raw(refreshEveryRollout()).execute(db);
  step('analyze');
  await sql`ANALYZE`.execute(db);
}
