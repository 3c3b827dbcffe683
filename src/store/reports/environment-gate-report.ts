// The environment gate — the question Kalypso's Check Promote asks after a PR to an environment's
// GitOps branch is merged: has every reconciler subscribed to any deployment target of the
// environment applied the merged commit C, or a commit that came after it, successfully? Each
// subscriber is judged as the endpoint gate judges it (kalypso_gate).
//
// Scope: the targets whose branch has carried C (some reconciler or assignment on an endpoint of the
// branch saw it). An environment whose targets pull several repositories is judged on the ones the
// commit belongs to; while no branch has seen C yet, every target is judged (all in progress).
import { type Kysely, sql } from 'kysely';
import type { HubDatabase } from '../database-schema.ts';
import { addStatus, emptyCounts, type ReportContext, type StatusCounts } from './report-context.ts';
import { gateRows, isSettled, type RolloutSubscriber, subscriberOf } from './rollout-gate-report.ts';

export interface EnvironmentGateSubscriber extends RolloutSubscriber {
  manifestsEndpoint: string;
}

export interface EnvironmentGateTarget extends StatusCounts {
  workspace: string;
  application: string;
  workload: string;
  deploymentTarget: string;
  manifestsEndpoint: string;
  /** The target's desired version and commit now, if it has one. */
  desiredVersion: string | null;
  desiredCommit: string | null;
}

export interface EnvironmentRolloutState extends StatusCounts {
  environment: string;
  commit: string;
  /** Every subscriber succeeded or failed (none in progress or stale), and there is at least one. */
  settled: boolean;
  subscribers: EnvironmentGateSubscriber[];
  targets: EnvironmentGateTarget[];
}

export async function environmentGateReport(
  db: Kysely<HubDatabase>,
  context: ReportContext,
  environment: string,
  commit: string,
): Promise<EnvironmentRolloutState> {
  const targets = await sql<{
    workspace: string;
    application: string;
    workload: string;
    name: string;
    endpoint_id: number;
    endpoint: string;
    version: string | null;
    commit: string | null;
    judged: boolean;
  }>`
    WITH targets AS (
      SELECT t.workspace, t.application, t.workload, t.name, t.manifests_endpoint_id AS endpoint_id, t.current_assignment_id
        FROM deployment_target_named t
       WHERE t.environment = ${environment}
    ), endpoints AS (
      SELECT e.id,
             EXISTS (SELECT 1 FROM endpoint_peer p
                       JOIN endpoint_commit ec ON ec.manifests_endpoint_id = p.peer_id AND ec.gitops_commit_id = ${commit}
                      WHERE p.endpoint_id = e.id) AS carried
        FROM (SELECT DISTINCT endpoint_id AS id FROM targets) e
    )
    SELECT t.workspace, t.application, t.workload, t.name, t.endpoint_id, me.endpoint, v.version, a.gitops_commit_id AS commit,
           e.carried OR NOT EXISTS (SELECT 1 FROM endpoints WHERE carried) AS judged
      FROM targets t
      JOIN endpoints e ON e.id = t.endpoint_id
      JOIN manifests_endpoint me ON me.id = t.endpoint_id
      LEFT JOIN deployment_assignment a ON a.id = t.current_assignment_id
      LEFT JOIN workload_version v ON v.id = a.workload_version_id
     ORDER BY t.workspace, t.application, t.workload, t.name`.execute(db);

  const judged = targets.rows.filter((target) => target.judged);
  const endpointIds = [...new Set(judged.map((target) => target.endpoint_id))];
  const rows = endpointIds.length === 0 ? [] : await gateRows(db, context, sql`SELECT unnest(${endpointIds}::bigint[])`, commit);
  const endpointNames = new Map(judged.map((target) => [target.endpoint_id, target.endpoint]));

  const counts = emptyCounts();
  const perEndpoint = new Map<number, StatusCounts>();
  const subscribers = rows.map((row): EnvironmentGateSubscriber => {
    // A reconciler pulls one endpoint: counting per endpoint counts each reconciler once.
    addStatus(counts, row.status);
    const endpointCounts = perEndpoint.get(row.endpoint_id) ?? emptyCounts();
    perEndpoint.set(row.endpoint_id, endpointCounts);
    addStatus(endpointCounts, row.status);
    return { ...subscriberOf(row, commit), manifestsEndpoint: endpointNames.get(row.endpoint_id)! };
  });
  return {
    environment,
    commit,
    ...counts,
    settled: isSettled(counts),
    subscribers,
    targets: judged.map((target) => ({
      workspace: target.workspace,
      application: target.application,
      workload: target.workload,
      deploymentTarget: target.name,
      manifestsEndpoint: target.endpoint,
      desiredVersion: target.version,
      desiredCommit: target.commit,
      ...(perEndpoint.get(target.endpoint_id) ?? emptyCounts()),
    })),
  };
}
