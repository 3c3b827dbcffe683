// The environment gate — the question Kalypso's Check Promote asks after a PR to an environment's
// GitOps branch is merged: has every reconciler subscribed to any deployment target of the
// environment applied the merged commit C, or a commit that came after it, successfully? Each
// subscriber is judged as the endpoint gate judges it (kalypso_gate).
//
// Scope: the targets whose branch has carried C (some reconciler or assignment on an endpoint of the
// branch saw it). An environment whose targets pull several repositories is judged on the ones the
// commit belongs to; while no branch has seen C yet, every target is judged (all in progress).
import { type Kysely, sql } from 'kysely';
import type { EnvironmentRolloutState, EnvironmentSubscriber } from '../../contract/answer-types.ts';
import type { HubDatabase } from '../database-schema.ts';
import { addStatus, emptyCounts, type ReportContext, type StatusCounts } from './report-context.ts';
import { gateRows, gateTarget, gateTargets, isSettled, subscriberOf } from './rollout-gate-report.ts';

export async function environmentGateReport(
  db: Kysely<HubDatabase>,
  context: ReportContext,
  environment: string,
  commit: string,
): Promise<EnvironmentRolloutState> {
  const targets = await gateTargets(db, sql`t.environment = ${environment}`, commit);
  // While no branch has carried the commit, every target is judged (all in progress).
  const anyCarried = targets.some((target) => target.carried);
  const judged = targets.filter((target) => target.carried || !anyCarried);
  const endpointIds = [...new Set(judged.map((target) => target.endpoint_id))];
  const rows = endpointIds.length === 0 ? [] : await gateRows(db, context, sql`SELECT unnest(${endpointIds}::bigint[])`, commit);
  const endpointNames = new Map(judged.map((target) => [target.endpoint_id, target.endpoint]));

  const counts = emptyCounts();
  const perEndpoint = new Map<number, StatusCounts>();
  const subscribers = rows.map((row): EnvironmentSubscriber => {
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
    targets: judged.map((target) => gateTarget(target, perEndpoint.get(target.endpoint_id) ?? emptyCounts())),
  };
}
