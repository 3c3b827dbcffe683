// "Drift": reconcilers that are not where their deployment target wants them — not on the desired
// rollout (neither the desired commit nor another commit that runs the desired version: a merge for
// another target moves every cluster of the branch, and is no drift), failing, or stale — and since
// when. The same rules as the kalypso_drift view (schema/0010).
import { type Kysely, sql } from 'kysely';
import type { HubDatabase } from '../database-schema.ts';
import { type EffectiveStatus, effectiveStatus, joinVersionAt, lastSeen, type ReportContext, staleBefore } from './report-context.ts';

export type DriftReason = 'not_on_desired_commit' | 'failing' | 'stale';

export interface DriftItem {
  environment: string;
  workspace: string;
  application: string;
  workload: string;
  deploymentTarget: string;
  host: string;
  reconciler: string;
  desiredVersion: string | null;
  desiredCommit: string | null;
  appliedCommit: string;
  /** The version that runs at the applied commit (assigned with it, or carried), if known. */
  appliedVersion: string | null;
  status: EffectiveStatus;
  statusMessage: string;
  reasons: DriftReason[];
  /** The earliest moment any of the reasons held. */
  driftingSince: Date;
  driftingForSeconds: number;
}

export async function driftReport(
  db: Kysely<HubDatabase>,
  context: ReportContext,
  environment: string | undefined,
): Promise<DriftItem[]> {
  const stale = sql<boolean>`${lastSeen('s')} < ${staleBefore(context)}::timestamptz`;
  const rows = await sql<{
    environment: string;
    workspace: string;
    application: string;
    workload: string;
    target: string;
    host: string;
    reconciler: string;
    desired_version: string | null;
    desired_commit: string | null;
    rollout_started_at: Date | null;
    off_rollout: boolean;
    applied_commit: string;
    applied_version: string | null;
    status: EffectiveStatus;
    reported_status: string;
    status_message: string;
    observed_at: Date;
    last_seen_at: Date;
    is_stale: boolean;
  }>`
    WITH targets AS (
      SELECT t.id, t.manifests_endpoint_id, ca.gitops_commit_id AS desired_commit, ca.rollout_id AS desired_rollout
        FROM deployment_target_named t
        LEFT JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
       WHERE ${environment === undefined ? sql`true` : sql`t.environment = ${environment}`}
    ), judged AS (
      -- The rollout of the applied commit is looked up (by index, row by row) only for reconcilers
      -- off the desired commit: most are on it, and a set-wide lookup would read every target's commits.
      SELECT t.id AS target_id, s.*,
             t.desired_rollout IS NOT NULL AND s.gitops_commit_id IS DISTINCT FROM t.desired_commit
               AND (SELECT a.rollout_id FROM target_commit tc JOIN deployment_assignment a ON a.id = tc.assignment_id
                     WHERE tc.deployment_target_id = t.id AND tc.gitops_commit_id = s.gitops_commit_id) IS DISTINCT FROM t.desired_rollout
               AS off_rollout
        FROM targets t
        JOIN deployment_state s ON s.manifests_endpoint_id = t.manifests_endpoint_id
    ), drifting AS (
      -- Find the drifting reconcilers on narrow rows first; name them afterwards.
      SELECT * FROM judged s WHERE s.off_rollout OR s.status = 'failure' OR ${stale}
    )
    SELECT t.environment, t.workspace, t.application, t.workload, t.name AS target, h.name AS host, r.name AS reconciler, cv.version AS desired_version, ca.gitops_commit_id AS desired_commit,
           cr.assigned_at AS rollout_started_at, s.off_rollout, s.gitops_commit_id AS applied_commit, dv.version AS applied_version,
           ${effectiveStatus('s', context)} AS status, s.status AS reported_status, s.status_message, s.observed_at,
           ${lastSeen('s')} AS last_seen_at, ${stale} AS is_stale
      FROM drifting s
      JOIN deployment_target_named t ON t.id = s.target_id
      JOIN reconciler r ON r.id = s.reconciler_id
      JOIN host h ON h.id = s.host_id
      LEFT JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
      LEFT JOIN deployment_assignment cr ON cr.id = ca.rollout_id
      LEFT JOIN workload_version cv ON cv.id = ca.workload_version_id
      ${joinVersionAt('t', sql`s.gitops_commit_id`, 'dv')}`.execute(db);

  const items = rows.rows.map((row): DriftItem => {
    const reasons: DriftReason[] = [];
    const since: Date[] = [];
    if (row.off_rollout) {
      reasons.push('not_on_desired_commit');
      // Out of date since the desired rollout began, or since the reconciler moved away from it,
      // whichever came later.
      since.push(row.rollout_started_at! > row.observed_at ? row.rollout_started_at! : row.observed_at);
    }
    if (row.reported_status === 'failure') {
      reasons.push('failing');
      since.push(row.observed_at);
    }
    if (row.is_stale) {
      reasons.push('stale');
      since.push(row.last_seen_at);
    }
    const driftingSince = new Date(Math.min(...since.map((time) => time.getTime())));
    return {
      environment: row.environment,
      workspace: row.workspace,
      application: row.application,
      workload: row.workload,
      deploymentTarget: row.target,
      host: row.host,
      reconciler: row.reconciler,
      desiredVersion: row.desired_version,
      desiredCommit: row.desired_commit,
      appliedCommit: row.applied_commit,
      appliedVersion: row.applied_version,
      status: row.status,
      statusMessage: row.status_message,
      reasons,
      driftingSince,
      driftingForSeconds: Math.max(0, Math.round((context.asOf.getTime() - driftingSince.getTime()) / 1_000)),
    };
  });
  // Longest-standing drift first.
  return items.sort(
    (a, b) => a.driftingSince.getTime() - b.driftingSince.getTime() || a.host.localeCompare(b.host) || a.reconciler.localeCompare(b.reconciler),
  );
}
