// The rollout gate: has commit C of manifests endpoint E been applied by every reconciler that
// pulls E (its subscribers)? Stale subscribers never count as success. A subscriber on a commit
// the hub knows to be newer for the same endpoint (assigned later) has moved past C: its own
// status counts, since the newer commit contains C.
import { type Kysely, sql } from 'kysely';
import type { HubDatabase } from '../database-schema.ts';
import { addStatus, type EffectiveStatus, emptyCounts, lastSeen, type ReportContext, staleBefore, type StatusCounts } from './report-context.ts';

export interface RolloutSubscriber {
  host: string;
  reconciler: string;
  reconcilerType: string;
  status: EffectiveStatus;
  statusMessage: string;
  appliedCommit: string;
  /** When the subscriber entered its current state. */
  observedAt: Date;
  lastSeenAt: Date;
  /** Set when the subscriber applied a newer commit of the same endpoint instead of C. */
  supersededBy: string | null;
}

export interface RolloutState extends StatusCounts {
  manifestsEndpoint: string;
  commit: string;
  /** Every subscriber succeeded or failed (none in progress or stale), and there is at least one. */
  settled: boolean;
  subscribers: RolloutSubscriber[];
}

export async function rolloutGateReport(
  db: Kysely<HubDatabase>,
  context: ReportContext,
  endpoint: string,
  commit: string,
): Promise<RolloutState> {
  const rows = await sql<{
    host: string;
    reconciler: string;
    type: string;
    applied_commit: string;
    status: 'success' | 'failure' | 'in_progress';
    status_message: string;
    observed_at: Date;
    last_seen_at: Date;
    newer: boolean;
  }>`
    WITH endpoint AS (
      SELECT id FROM manifests_endpoint WHERE endpoint = ${endpoint}
    ), assigned AS (
      -- When C was assigned to a target on this endpoint, and which commits were assigned after it.
      SELECT a.gitops_commit_id, min(a.assigned_at) AS assigned_at
        FROM deployment_assignment a
        JOIN deployment_target t ON t.id = a.deployment_target_id
       WHERE t.manifests_endpoint_id = (SELECT id FROM endpoint)
       GROUP BY a.gitops_commit_id
    )
    SELECT h.name AS host, r.name AS reconciler, r.type, s.gitops_commit_id AS applied_commit, s.status,
           s.status_message, s.observed_at, ${lastSeen('s')} AS last_seen_at,
           coalesce(applied.assigned_at > (SELECT assigned_at FROM assigned WHERE gitops_commit_id = ${commit}), false) AS newer
      FROM deployment_state s
      JOIN reconciler r ON r.id = s.reconciler_id
      JOIN host h ON h.id = s.host_id
      LEFT JOIN assigned applied ON applied.gitops_commit_id = s.gitops_commit_id
     WHERE s.manifests_endpoint_id = (SELECT id FROM endpoint)
     ORDER BY h.name, r.name`.execute(db);

  const cutoff = staleBefore(context);
  const counts = emptyCounts();
  const subscribers = rows.rows.map((row): RolloutSubscriber => {
    const onCommit = row.applied_commit === commit;
    let status: EffectiveStatus;
    let message = row.status_message;
    if (row.last_seen_at < cutoff) status = 'stale';
    else if (onCommit || row.newer) status = row.status;
    else {
      status = 'in_progress';
      message = `applied ${row.applied_commit}; ${commit} not applied yet${row.status_message === '' ? '' : ` (${row.status_message})`}`;
    }
    addStatus(counts, status);
    return {
      host: row.host,
      reconciler: row.reconciler,
      reconcilerType: row.type,
      status,
      statusMessage: message,
      appliedCommit: row.applied_commit,
      observedAt: row.observed_at,
      lastSeenAt: row.last_seen_at,
      supersededBy: !onCommit && row.newer ? row.applied_commit : null,
    };
  });
  return {
    manifestsEndpoint: endpoint,
    commit,
    ...counts,
    settled: counts.total > 0 && counts.inProgress === 0 && counts.stale === 0,
    subscribers,
  };
}
