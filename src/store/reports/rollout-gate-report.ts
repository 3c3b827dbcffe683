// The rollout gate: has commit C of manifests endpoint E been applied by every reconciler that
// pulls E (its subscribers)? The judgement is the database's (kalypso_gate, schema/0010): on C or on
// a commit witnessed to have come after C on E's branch, a subscriber's own status counts; on any
// other commit it is in progress; stale never counts as success.
import { type Kysely, sql } from 'kysely';
import type { EndpointRolloutState, GateTarget, Subscriber } from '../../contract/answer-types.ts';
import type { HubDatabase } from '../database-schema.ts';
import { TARGET_ENVIRONMENT_ORDER } from './environments-report.ts';
import { addStatus, type EffectiveStatus, emptyCounts, isoTime, joinVersionAt, type ReportContext, staleBefore, type StatusCounts } from './report-context.ts';

/** A row of gateTargets: a target, its endpoint's id, and whether its branch has carried the commit. */
export interface GateTargetRow {
  environment: string;
  workspace: string;
  application: string;
  workload: string;
  name: string;
  endpoint_id: number;
  endpoint: string;
  version: string | null;
  desired_version: string | null;
  desired_commit: string | null;
  carried: boolean;
}

/**
 * The deployment targets chosen by `where` (a condition on `t`, deployment_target_named), in
 * promotion order, with the version `commit` runs on each and whether the target's branch has
 * carried it (some reconciler or assignment on an endpoint of the branch saw it).
 */
export async function gateTargets(db: Kysely<HubDatabase>, where: ReturnType<typeof sql>, commit: string): Promise<GateTargetRow[]> {
  const rows = await sql<GateTargetRow>`
    SELECT t.environment, t.workspace, t.application, t.workload, t.name, t.manifests_endpoint_id AS endpoint_id, me.endpoint,
           at_commit.version, desired.version AS desired_version, a.gitops_commit_id AS desired_commit,
           EXISTS (SELECT 1 FROM endpoint_peer p
                     JOIN endpoint_commit ec ON ec.manifests_endpoint_id = p.peer_id AND ec.gitops_commit_id = ${commit}
                    WHERE p.endpoint_id = t.manifests_endpoint_id) AS carried
      FROM deployment_target_named t
      JOIN manifests_endpoint me ON me.id = t.manifests_endpoint_id
      ${joinVersionAt('t', sql`${commit}`, 'at_commit')}
      LEFT JOIN deployment_assignment a ON a.id = t.current_assignment_id
      LEFT JOIN workload_version desired ON desired.id = a.workload_version_id
     WHERE ${where}
     ORDER BY ${TARGET_ENVIRONMENT_ORDER}, t.workspace, t.application, t.workload, t.name`.execute(db);
  return rows.rows;
}

export function gateTarget(row: GateTargetRow, counts: StatusCounts): GateTarget {
  return {
    environment: row.environment,
    workspace: row.workspace,
    application: row.application,
    workload: row.workload,
    deploymentTarget: row.name,
    manifestsEndpoint: row.endpoint,
    version: row.version,
    desiredVersion: row.desired_version,
    desiredCommit: row.desired_commit,
    ...counts,
  };
}

/** A row of kalypso_gate with its names. */
export interface GateRow {
  endpoint_id: number;
  host: string;
  reconciler: string;
  type: string;
  applied_commit: string;
  status: EffectiveStatus;
  status_message: string;
  observed_at: Date;
  last_seen_at: Date;
  moved_past: boolean;
}

/** kalypso_gate for each endpoint id of `endpoints` (a query), named, by host and reconciler. */
export async function gateRows(db: Kysely<HubDatabase>, context: ReportContext, endpoints: ReturnType<typeof sql>, commit: string): Promise<GateRow[]> {
  const rows = await sql<GateRow>`
    SELECT e.id AS endpoint_id, h.name AS host, r.name AS reconciler, r.type, g.applied_commit, g.status, g.status_message,
           g.observed_at, g.last_seen_at, g.moved_past
      FROM (${endpoints}) AS e(id)
      CROSS JOIN LATERAL kalypso_gate(e.id, ${commit}, ${staleBefore(context)}::timestamptz) g
      JOIN reconciler r ON r.id = g.reconciler_id
      JOIN host h ON h.id = g.host_id
     ORDER BY h.name, r.name`.execute(db);
  return rows.rows;
}

export function subscriberOf(row: GateRow, commit: string): Subscriber {
  const onCommit = row.applied_commit === commit;
  const waiting = row.status === 'in_progress' && !onCommit && !row.moved_past;
  return {
    host: row.host,
    reconciler: row.reconciler,
    reconcilerType: row.type,
    status: row.status,
    statusMessage: waiting
      ? `applied ${row.applied_commit}; ${commit} not applied yet${row.status_message === '' ? '' : ` (${row.status_message})`}`
      : row.status_message,
    appliedCommit: row.applied_commit,
    observedAt: isoTime(row.observed_at),
    lastSeenAt: isoTime(row.last_seen_at),
    supersededBy: row.moved_past ? row.applied_commit : null,
  };
}

export function isSettled(counts: StatusCounts): boolean {
  return counts.total > 0 && counts.inProgress === 0 && counts.stale === 0;
}

export async function rolloutGateReport(
  db: Kysely<HubDatabase>,
  context: ReportContext,
  endpoint: string,
  commit: string,
): Promise<EndpointRolloutState> {
  const [rows, targets] = await Promise.all([
    gateRows(db, context, sql`SELECT id FROM manifests_endpoint WHERE endpoint = ${endpoint}`, commit),
    gateTargets(db, sql`me.endpoint = ${endpoint}`, commit),
  ]);
  const counts = emptyCounts();
  const subscribers = rows.map((row) => {
    addStatus(counts, row.status);
    return subscriberOf(row, commit);
  });
  return {
    manifestsEndpoint: endpoint,
    commit,
    ...counts,
    settled: isSettled(counts),
    subscribers,
    // Every reconciler of the endpoint pulls each of its targets: the endpoint's counts are theirs.
    targets: targets.map((target) => gateTarget(target, counts)),
  };
}
