// Writes desired-state records (deployment descriptors) inside the caller's transaction. Each
// descriptor becomes an assignment of a workload version to a deployment target under a GitOps
// commit; the target's current assignment moves only forward in assignment time — the time
// evidence of the source (when a Kustomization applied the revision, a record's time), never the
// commit's text — so a late or re-delivered descriptor is kept as history without taking over.
// Each new assignment also takes its place in the target's rollouts and commit order (schema/0010).
import { type Kysely, sql } from 'kysely';
import type { DesiredStateRecord } from '../model/deployment-records.ts';
import type { HubDatabase } from './database-schema.ts';
import { queueRolloutRefresh } from './rollout-refresh.ts';

export interface ResolvedDescriptor {
  readonly record: DesiredStateRecord;
  readonly workloadId: number;
  readonly environmentId: number;
  readonly endpointId: number;
}

export interface DesiredStateWriteSummary {
  readonly assignments: number;
}

export async function writeDesiredState(
  trx: Kysely<HubDatabase>,
  descriptors: readonly ResolvedDescriptor[],
): Promise<DesiredStateWriteSummary> {
  let assignments = 0;
  // One order for every writer: targets are locked in the same sequence, so no deadlock.
  const ordered = [...descriptors].sort(
    (a, b) =>
      a.workloadId - b.workloadId ||
      a.environmentId - b.environmentId ||
      compare(a.record.deploymentTarget.name, b.record.deploymentTarget.name) ||
      a.record.assignedAt.getTime() - b.record.assignedAt.getTime(),
  );
  for (const descriptor of ordered) {
    const { record } = descriptor;
    await updateWorkloadSource(trx, descriptor);
    const target = await sql<{ id: number }>`
      INSERT INTO deployment_target (workload_id, environment_id, name, manifests_endpoint_id)
      VALUES (${descriptor.workloadId}, ${descriptor.environmentId}, ${record.deploymentTarget.name}, ${descriptor.endpointId})
      ON CONFLICT (workload_id, environment_id, name) DO UPDATE SET name = excluded.name
      RETURNING id`.execute(trx);
    const targetId = target.rows[0]!.id;
    const version = await sql<{ id: number }>`
      INSERT INTO workload_version (workload_id, version, build, build_commit, build_time)
      VALUES (${descriptor.workloadId}, ${record.workloadVersion.version}, ${record.workloadVersion.build},
              ${record.workloadVersion.commit ?? null}, ${record.workloadVersion.buildTime ?? null})
      ON CONFLICT (workload_id, version, build) DO UPDATE SET
             build_commit = coalesce(excluded.build_commit, workload_version.build_commit),
             build_time = coalesce(excluded.build_time, workload_version.build_time)
      RETURNING id`.execute(trx);
    const versionId = version.rows[0]!.id;
    const inserted = await sql<{ id: number }>`
      INSERT INTO deployment_assignment (deployment_target_id, workload_version_id, gitops_commit_id, assigned_at)
      VALUES (${targetId}, ${versionId}, ${record.commitId}, ${record.assignedAt})
      ON CONFLICT (deployment_target_id, gitops_commit_id) DO NOTHING
      RETURNING id`.execute(trx);
    if (inserted.rows.length > 0) {
      assignments += 1;
      await sql`SELECT kalypso_assignment_added(${inserted.rows[0]!.id}::bigint)`.execute(trx);
      // The new rollout, and the one it supersedes: both are refreshed (schema/0008).
      await sql`${queueRolloutRefresh(
        sql`VALUES (${descriptor.endpointId}::bigint, ${record.assignedAt}::timestamptz - interval '1 hour', 'infinity'::timestamptz)`,
      )}`.execute(trx);
    }
    // The assignment as stored: the first delivery of a descriptor defines it.
    const assignment = await sql<{ id: number; assigned_at: Date }>`
      SELECT id, assigned_at FROM deployment_assignment
       WHERE deployment_target_id = ${targetId} AND gitops_commit_id = ${record.commitId}`.execute(trx);
    const { id: assignmentId, assigned_at: assignedAt } = assignment.rows[0]!;
    await sql`
      UPDATE deployment_target t
         SET current_assignment_id = ${assignmentId}, manifests_endpoint_id = ${descriptor.endpointId}, updated_at = now()
       WHERE t.id = ${targetId}
         AND t.current_assignment_id IS DISTINCT FROM ${assignmentId}
         AND (t.current_assignment_id IS NULL OR EXISTS (
               SELECT 1 FROM deployment_assignment c
                WHERE c.id = t.current_assignment_id
                  AND (c.assigned_at, c.id) < (${assignedAt}::timestamptz, ${assignmentId}::bigint)))`.execute(
      trx,
    );
  }
  return { assignments };
}

async function updateWorkloadSource(trx: Kysely<HubDatabase>, descriptor: ResolvedDescriptor): Promise<void> {
  const source = descriptor.record.workload.source;
  if (source === undefined) return;
  await sql`
    UPDATE workload SET source_repo = ${source.repo}, source_branch = ${source.branch}, source_path = ${source.path}
     WHERE id = ${descriptor.workloadId}
       AND (source_repo, source_branch, source_path) IS DISTINCT FROM (${source.repo}, ${source.branch}, ${source.path})`.execute(
    trx,
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
