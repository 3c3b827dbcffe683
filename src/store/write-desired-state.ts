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
    await updateWorkloadSource(trx, descriptor);
    const targetId = await ensureTarget(trx, descriptor);
    const versionId = await ensureVersion(trx, descriptor);
    if (await addAssignment(trx, descriptor, targetId, versionId)) assignments += 1;
    await moveTarget(trx, targetId, descriptor);
  }
  return { assignments };
}

async function ensureTarget(trx: Kysely<HubDatabase>, descriptor: ResolvedDescriptor): Promise<number> {
  const row = await trx
    .insertInto('deployment_target')
    .values({
      workload_id: descriptor.workloadId,
      environment_id: descriptor.environmentId,
      name: descriptor.record.deploymentTarget.name,
      manifests_endpoint_id: descriptor.endpointId,
    })
    // (A no-op update, so that an existing target's id is returned too.)
    .onConflict((conflict) => conflict.columns(['workload_id', 'environment_id', 'name']).doUpdateSet((eb) => ({ name: eb.ref('excluded.name') })))
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The version's build facts are kept once known: a later descriptor without them does not erase them. */
async function ensureVersion(trx: Kysely<HubDatabase>, descriptor: ResolvedDescriptor): Promise<number> {
  const version = descriptor.record.workloadVersion;
  const row = await trx
    .insertInto('workload_version')
    .values({
      workload_id: descriptor.workloadId,
      version: version.version,
      build: version.build,
      build_commit: version.commit ?? null,
      build_time: version.buildTime ?? null,
    })
    .onConflict((conflict) =>
      conflict.columns(['workload_id', 'version', 'build']).doUpdateSet((eb) => ({
        build_commit: eb.fn.coalesce('excluded.build_commit', 'workload_version.build_commit'),
        build_time: eb.fn.coalesce('excluded.build_time', 'workload_version.build_time'),
      })),
    )
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Whether the assignment is new: then it takes its place in the target's rollouts and commit order. */
async function addAssignment(trx: Kysely<HubDatabase>, descriptor: ResolvedDescriptor, targetId: number, versionId: number): Promise<boolean> {
  const { record } = descriptor;
  const inserted = await trx
    .insertInto('deployment_assignment')
    .values({ deployment_target_id: targetId, workload_version_id: versionId, gitops_commit_id: record.commitId, assigned_at: record.assignedAt })
    .onConflict((conflict) => conflict.columns(['deployment_target_id', 'gitops_commit_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted === undefined) return false;
  await sql`SELECT kalypso_assignment_added(${inserted.id}::bigint)`.execute(trx);
  // The new rollout, and the one it supersedes: both are refreshed (schema/0008).
  await sql`${queueRolloutRefresh(
    sql`VALUES (${descriptor.endpointId}::bigint, ${record.assignedAt}::timestamptz - interval '1 hour', 'infinity'::timestamptz)`,
  )}`.execute(trx);
  return true;
}

/**
 * Moves the target to the descriptor's assignment as stored (the first delivery of a descriptor
 * defines it), if that is later in assignment time than the target's current one.
 */
async function moveTarget(trx: Kysely<HubDatabase>, targetId: number, descriptor: ResolvedDescriptor): Promise<void> {
  const assignment = await trx
    .selectFrom('deployment_assignment')
    .select(['id', 'assigned_at'])
    .where('deployment_target_id', '=', targetId)
    .where('gitops_commit_id', '=', descriptor.record.commitId)
    .executeTakeFirstOrThrow();
  await trx
    .updateTable('deployment_target as t')
    .set({ current_assignment_id: assignment.id, manifests_endpoint_id: descriptor.endpointId, updated_at: sql`now()` })
    .where('t.id', '=', targetId)
    .where('t.current_assignment_id', 'is distinct from', assignment.id)
    .where((eb) =>
      eb.or([
        eb('t.current_assignment_id', 'is', null),
        eb.exists(
          eb
            .selectFrom('deployment_assignment as c')
            .select(sql.lit(1).as('one'))
            .whereRef('c.id', '=', 't.current_assignment_id')
            .where((later) => later(later.refTuple('c.assigned_at', 'c.id'), '<', later.tuple(assignment.assigned_at, assignment.id))),
        ),
      ]),
    )
    .execute();
}

async function updateWorkloadSource(trx: Kysely<HubDatabase>, descriptor: ResolvedDescriptor): Promise<void> {
  const source = descriptor.record.workload.source;
  if (source === undefined) return;
  await trx
    .updateTable('workload')
    .set({ source_repo: source.repo, source_branch: source.branch, source_path: source.path })
    .where('id', '=', descriptor.workloadId)
    .where((eb) => eb(eb.refTuple('source_repo', 'source_branch', 'source_path'), 'is distinct from', eb.tuple(source.repo, source.branch, source.path)))
    .execute();
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
