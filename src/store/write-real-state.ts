// Writes real-state reports inside the caller's transaction: locks the reconcilers concerned (in
// id order, so concurrent writers never deadlock on them), reads their current state, plans the
// transitions (state-transitions.ts) and applies them with one statement per table. The reconciler
// lock serializes all writers of one reconciler; writers of different reconcilers run in parallel.
import { type Kysely, sql } from 'kysely';
import type { DeploymentStatus } from '../model/deployment-records.ts';
import type { HubDatabase } from './database-schema.ts';
import { type CommitEvidence, commitEvidence, type RecordedEvidence } from './commit-evidence.ts';
import { idArray, textArray, timestamps } from './pg-arrays.ts';
import { MissingReferenceError } from './store-errors.ts';
import { queueRolloutRefresh } from './rollout-refresh.ts';
import {
  type CurrentState,
  keepLateReports,
  planStateChanges,
  type StateKey,
  type StateReport,
} from './state-transitions.ts';

export interface ResolvedStateReport extends StateReport {
  readonly hostId: number;
  /** undefined when the report did not state the host type. */
  readonly hostType: string | undefined;
  readonly reconcilerType: string;
  readonly reportedBy: string | undefined;
}

export interface RealStateWriteSummary {
  readonly transitions: number;
  readonly late: number;
  /** The commit evidence written: for the caller to remember once the transaction committed. */
  readonly evidence: CommitEvidence;
}

/** Times come as milliseconds since the epoch: a number is read faster than a date's text. */
interface LockedReconciler {
  id: number;
  type: string;
  reported_by: string | null;
  manifests_endpoint_id: number;
  removed_ms: number | null;
  state_endpoint_id: number | null;
  gitops_commit_id: string | null;
  status: DeploymentStatus | null;
  status_message: string | null;
  observed_ms: number | null;
  last_observed_ms: number | null;
}

export interface RealStateWriteOptions {
  /** Evidence already recorded by this hub: not written again. */
  readonly recorded?: RecordedEvidence;
  /**
   * false: every history row is inserted with ON CONFLICT DO NOTHING, as after a write that met a
   * row it trusted to be new (the caller retries so; see `newerThanHistory`).
   */
  readonly trustNewer?: boolean;
}

export async function writeRealState(
  trx: Kysely<HubDatabase>,
  reports: readonly ResolvedStateReport[],
  receivedAt: Date,
  options: RealStateWriteOptions = {},
): Promise<RealStateWriteSummary> {
  if (reports.length === 0) return { transitions: 0, late: 0, evidence: { sightings: [], successions: [] } };
  const { reconcilerIds, locked, stored } = await lockAndRead(trx, reports);

  const plan = planStateChanges(stored, reports);
  const lateKept = plan.late.length === 0 ? [] : keepLateReports(plan.late, await latePredecessors(trx, plan.late));
  const newer = options.trustNewer === false ? new Set<number>() : newerThanHistory(locked);
  const fresh: StateReport[] = [];
  const maybeStored: StateReport[] = [...lateKept];
  for (const row of plan.history) {
    const before = stored.get(row.reconcilerId);
    const isFresh = newer.has(row.reconcilerId) && (before === undefined || row.observedAt > before.lastObservedAt);
    (isFresh ? fresh : maybeStored).push(row);
  }
  const inserted = await insertHistory(trx, fresh, maybeStored, receivedAt);
  const hostOf = new Map(reports.map((report) => [report.reconcilerId, report.hostId]));
  await writeCurrentStates(trx, plan.current, stored, hostOf, receivedAt);
  const confirmedOnly = reconcilerIds.filter((id) => !plan.current.has(id) && stored.has(id));
  if (confirmedOnly.length > 0) {
    await sql`UPDATE deployment_state SET last_received_at = ${receivedAt}
               WHERE reconciler_id = ANY(${idArray(confirmedOnly)}::bigint[])`.execute(trx);
  }
  const revived = await updateReconcilers(trx, locked, reports, stored);
  await queueSubscriptionChanges(trx, plan.current, stored, revived);
  await updateHosts(trx, reports, receivedAt);
  // Last: concurrent batches after the same merge write the same new sightings and successions,
  // and wait for each other's row there until commit — the shorter that is, the better.
  const found = commitEvidence(stored, plan.history, lateKept);
  const evidence = options.recorded === undefined ? found : options.recorded.unrecorded(found);
  await recordCommitEvidence(trx, evidence);
  return { transitions: inserted, late: plan.late.length, evidence };
}

/**
 * Locks the batch's reconcilers, then reads their rows and current states. Lock first, read after:
 * under READ COMMITTED a statement that waited for a lock still sees the other tables as of its
 * start, so the state must be read by a statement of its own.
 */
async function lockAndRead(
  trx: Kysely<HubDatabase>,
  reports: readonly ResolvedStateReport[],
): Promise<{ reconcilerIds: number[]; locked: LockedReconciler[]; stored: Map<number, CurrentState> }> {
  const reconcilerIds = [...new Set(reports.map((report) => report.reconcilerId))].sort((a, b) => a - b);
  const ids = idArray(reconcilerIds);
  const endpointIds = [...new Set(reports.map((report) => report.endpointId))];
  // The same statement counts what it locked and the endpoints the batch names (checkReferences);
  // MATERIALIZED keeps the lock as written: in id order, so that concurrent batches cannot deadlock.
  const lockedCount = await sql<{ reconcilers: number; endpoints: number }>`
    WITH locked AS MATERIALIZED (SELECT id FROM reconciler WHERE id = ANY(${ids}::bigint[]) ORDER BY id FOR NO KEY UPDATE)
    SELECT (SELECT count(*)::int FROM locked) AS reconcilers,
           (SELECT count(*)::int FROM manifests_endpoint WHERE id = ANY(${idArray(endpointIds)}::bigint[])) AS endpoints`.execute(trx);
  checkReferences({ reconcilers: reconcilerIds.length, endpoints: endpointIds.length }, lockedCount.rows[0]!);
  // Each state by key (OFFSET 0 keeps the lookup a subquery): as a plain join the planner chose to
  // hash every current state of the fleet — 13 ms per batch of 1,000 with 264,000 states, the
  // costliest statement of the ingest path.
  const locked = await sql<LockedReconciler>`
    SELECT r.id, r.type, r.reported_by, r.manifests_endpoint_id, (extract(epoch FROM r.removed_at) * 1000)::float8 AS removed_ms,
           s.manifests_endpoint_id AS state_endpoint_id, s.gitops_commit_id, s.status, s.status_message,
           (extract(epoch FROM s.observed_at) * 1000)::float8 AS observed_ms,
           (extract(epoch FROM s.last_observed_at) * 1000)::float8 AS last_observed_ms
      FROM reconciler r
      LEFT JOIN LATERAL (SELECT * FROM deployment_state s WHERE s.reconciler_id = r.id OFFSET 0) s ON true
     WHERE r.id = ANY(${ids}::bigint[])`.execute(trx);
  const stored = new Map<number, CurrentState>();
  for (const row of locked.rows) {
    if (row.status === null || row.observed_ms === null || row.last_observed_ms === null) continue;
    stored.set(row.id, {
      endpointId: row.state_endpoint_id ?? row.manifests_endpoint_id,
      commitId: row.gitops_commit_id ?? '',
      status: row.status,
      message: row.status_message ?? '',
      observedAt: new Date(row.observed_ms),
      lastObservedAt: new Date(row.last_observed_ms),
    });
  }
  return { reconcilerIds, locked: locked.rows, stored };
}

/**
 * The ids of a batch come from the hub's cache. A row that vanished since (a database restored from
 * a backup, a failover to a replica behind) must make the writer look its ids up again, not write
 * states that name nothing: the current state has no foreign keys to check that per row
 * (schema/0018), so the batch is checked once — every reconciler locked, every endpoint named.
 */
function checkReferences(named: { reconcilers: number; endpoints: number }, found: { reconcilers: number; endpoints: number }): void {
  if (found.reconcilers < named.reconcilers) throw new MissingReferenceError(`${named.reconcilers - found.reconcilers} cached reconciler ids name no row`);
  if (found.endpoints < named.endpoints) throw new MissingReferenceError(`${named.endpoints - found.endpoints} cached endpoint ids name no row`);
}

async function latePredecessors(
  trx: Kysely<HubDatabase>,
  late: readonly StateReport[],
): Promise<Map<number, StateKey & { observedAt: Date }>> {
  const rows = await sql<{
    ordinal: number;
    manifests_endpoint_id: number;
    gitops_commit_id: string;
    status: DeploymentStatus;
    status_message: string;
    observed_at: Date;
  }>`
    SELECT x.ordinal, h.manifests_endpoint_id, h.gitops_commit_id, h.status, h.status_message, h.observed_at
      FROM unnest(${idArray(late.map((report) => report.reconcilerId))}::bigint[],
                  ${timestamps(late.map((report) => report.observedAt))})
           WITH ORDINALITY AS x(reconciler_id, observed_at, ordinal)
      JOIN LATERAL (
            SELECT h.manifests_endpoint_id, h.gitops_commit_id, h.status, h.status_message, h.observed_at
              FROM deployment_state_history h
             WHERE h.reconciler_id = x.reconciler_id AND h.observed_at <= x.observed_at
             ORDER BY h.observed_at DESC, h.id DESC
             LIMIT 1) h ON true`.execute(trx);
  const predecessors = new Map<number, StateKey & { observedAt: Date }>();
  for (const row of rows.rows) {
    predecessors.set(row.ordinal - 1, {
      endpointId: row.manifests_endpoint_id,
      commitId: row.gitops_commit_id,
      status: row.status,
      message: row.status_message,
      observedAt: row.observed_at,
    });
  }
  return predecessors;
}

/**
 * Sightings and successions, with the versions they carry forward (schema/0010). Most batches only
 * confirm states or change a status, and witness nothing new: they skip the statement.
 */
async function recordCommitEvidence(trx: Kysely<HubDatabase>, evidence: CommitEvidence): Promise<void> {
  const { sightings, successions } = evidence;
  if (sightings.length === 0 && successions.length === 0) return;
  await sql`
    SELECT kalypso_commits_seen(
      ${idArray(sightings.map((s) => s.endpointId))}::bigint[], ${textArray(sightings.map((s) => s.commitId))}::text[],
      ${timestamps(sightings.map((s) => s.at))},
      ${idArray(successions.map((s) => s.endpointId))}::bigint[], ${textArray(successions.map((s) => s.from))}::text[],
      ${textArray(successions.map((s) => s.to))}::text[], ${timestamps(successions.map((s) => s.at))})`.execute(trx);
}

/**
 * The reconcilers whose stored history holds nothing newer than their current state's last report,
 * or nothing at all when they have no current state: those never removed. (Removal deletes the
 * current state; a late report may then start a new one older than history already stored, until a
 * report newer than the removal revives the reconciler.) A report newer than such a current state
 * cannot be in history, nor can any report of a reconciler that has none yet (its first contact:
 * under a burst of new hosts, the whole first round).
 */
function newerThanHistory(locked: readonly LockedReconciler[]): Set<number> {
  const ids = new Set<number>();
  for (const row of locked) if (row.removed_ms === null) ids.add(row.id);
  return ids;
}

/**
 * History rows, in one statement: `fresh` ones cannot be stored already (see `newerThanHistory`)
 * and are inserted plainly; the others may repeat a stored row (a report delivered twice, a late
 * one) and are inserted with ON CONFLICT DO NOTHING, whose speculative insertion costs a third
 * more per row (measured: 112–122 k against 158–161 k rows/s for batches of 1,000). Ids follow
 * arrival order within each group, `fresh` ones first.
 */
async function insertHistory(
  trx: Kysely<HubDatabase>,
  fresh: readonly StateReport[],
  maybeStored: readonly StateReport[],
  receivedAt: Date,
): Promise<number> {
  if (fresh.length === 0 && maybeStored.length === 0) return 0;
  const rowsOf = (rows: readonly StateReport[]) => sql`
    SELECT r.*, ${receivedAt}::timestamptz
      FROM unnest(${idArray(rows.map((row) => row.reconcilerId))}::bigint[],
                  ${idArray(rows.map((row) => row.endpointId))}::bigint[],
                  ${textArray(rows.map((row) => row.commitId))}::text[],
                  ${textArray(rows.map((row) => row.status))}::deployment_status[],
                  ${textArray(rows.map((row) => row.message))}::text[],
                  ${timestamps(rows.map((row) => row.observedAt))}) AS r`;
  const into = sql`INSERT INTO deployment_state_history
                          (reconciler_id, manifests_endpoint_id, gitops_commit_id, status, status_message, observed_at, received_at)`;
  // The same statement queues the rollouts these transitions concern for a refresh (schema/0008).
  const result = await sql<{ inserted: number }>`
    WITH fresh AS (
      ${into} ${rowsOf(fresh)}
      RETURNING manifests_endpoint_id, observed_at
    ), checked AS (
      ${into} ${rowsOf(maybeStored)}
      ON CONFLICT DO NOTHING
      RETURNING manifests_endpoint_id, observed_at
    ), inserted AS (
      SELECT * FROM fresh UNION ALL SELECT * FROM checked
    ), queued AS (
      ${queueRolloutRefresh(sql`SELECT manifests_endpoint_id, min(observed_at), max(observed_at) FROM inserted GROUP BY 1`)}
    )
    SELECT count(*)::int AS inserted FROM inserted`.execute(trx);
  return result.rows[0]!.inserted;
}

/**
 * New current states are inserted; changed ones updated in place. The caller holds the
 * reconcilers' locks, so which rows exist cannot change meanwhile, and an UPDATE joined to the
 * batch skips the speculative insert an upsert makes per row.
 */
async function writeCurrentStates(
  trx: Kysely<HubDatabase>,
  current: ReadonlyMap<number, CurrentState>,
  stored: ReadonlyMap<number, CurrentState>,
  hostOf: ReadonlyMap<number, number>,
  receivedAt: Date,
): Promise<void> {
  const ids = [...current.keys()].sort((a, b) => a - b);
  const changed = ids.filter((id) => stored.has(id));
  const added = ids.filter((id) => !stored.has(id));
  const column = <T>(list: readonly number[], pick: (state: CurrentState) => T): T[] => list.map((id) => pick(current.get(id)!));
  if (changed.length > 0) {
    // Each state is found by key (`= ANY(ARRAY(…))`, an index condition): as a plain join the
    // planner hashed every current state of the fleet, 16 of 22 ms per 1,000 with 72,000 states.
    await sql`
      WITH x AS (
        SELECT * FROM unnest(${idArray(changed)}::bigint[],
                             ${idArray(column(changed, (state) => state.endpointId))}::bigint[],
                             ${textArray(column(changed, (state) => state.commitId))}::text[],
                             ${textArray(column(changed, (state) => state.status))}::deployment_status[],
                             ${textArray(column(changed, (state) => state.message))}::text[],
                             ${timestamps(column(changed, (state) => state.observedAt))},
                             ${timestamps(column(changed, (state) => state.lastObservedAt))},
                             ${textArray(column(changed, (state) => state.details ?? null))}::jsonb[])
                 AS x(reconciler_id, endpoint_id, commit_id, status, message, observed_at, last_observed_at, details)
      )
      UPDATE deployment_state s
         SET manifests_endpoint_id = x.endpoint_id, gitops_commit_id = x.commit_id, status = x.status,
             status_message = x.message, observed_at = x.observed_at, last_observed_at = x.last_observed_at,
             details = x.details, last_received_at = ${receivedAt}::timestamptz
        FROM x
       WHERE s.reconciler_id = x.reconciler_id AND s.reconciler_id = ANY(ARRAY(SELECT reconciler_id FROM x))`.execute(trx);
  }
  if (added.length > 0) {
    await sql`
      INSERT INTO deployment_state
             (reconciler_id, host_id, manifests_endpoint_id, gitops_commit_id, status, status_message,
              observed_at, last_observed_at, details, last_received_at)
      SELECT s.*, ${receivedAt}::timestamptz
        FROM unnest(${idArray(added)}::bigint[],
                    ${idArray(added.map((id) => hostOf.get(id)!))}::bigint[],
                    ${idArray(column(added, (state) => state.endpointId))}::bigint[],
                    ${textArray(column(added, (state) => state.commitId))}::text[],
                    ${textArray(column(added, (state) => state.status))}::deployment_status[],
                    ${textArray(column(added, (state) => state.message))}::text[],
                    ${timestamps(column(added, (state) => state.observedAt))},
                    ${timestamps(column(added, (state) => state.lastObservedAt))},
                    ${textArray(column(added, (state) => state.details ?? null))}::jsonb[]) AS s`.execute(trx);
  }
}

/**
 * A reconciler takes its type and endpoint from its newest report, and a report newer than its
 * removal brings a removed reconciler back. Returns the ones brought back, with when they were removed.
 */
async function updateReconcilers(
  trx: Kysely<HubDatabase>,
  locked: readonly LockedReconciler[],
  reports: readonly ResolvedStateReport[],
  stored: ReadonlyMap<number, CurrentState>,
): Promise<{ id: number; removedAt: Date }[]> {
  const newest = new Map<number, ResolvedStateReport>();
  for (const report of reports) {
    const previous = newest.get(report.reconcilerId);
    if (previous === undefined || report.observedAt > previous.observedAt) newest.set(report.reconcilerId, report);
  }
  const changes: { id: number; type: string; endpointId: number; removedAt: Date | null; reportedBy: string | null }[] = [];
  const back: { id: number; removedAt: Date }[] = [];
  for (const row of locked) {
    const report = newest.get(row.id);
    if (report === undefined) continue;
    const storedLast = stored.get(row.id)?.lastObservedAt;
    const isNewest = storedLast === undefined || report.observedAt >= storedLast;
    const revived = row.removed_ms !== null && report.observedAt.getTime() > row.removed_ms;
    if (revived) back.push({ id: row.id, removedAt: new Date(row.removed_ms!) });
    const type = isNewest ? report.reconcilerType : row.type;
    const endpointId = isNewest ? report.endpointId : row.manifests_endpoint_id;
    const reportedBy = isNewest && report.reportedBy !== undefined ? report.reportedBy : row.reported_by;
    if (revived || type !== row.type || endpointId !== row.manifests_endpoint_id || reportedBy !== row.reported_by) {
      const removedAt = revived || row.removed_ms === null ? null : new Date(row.removed_ms);
      changes.push({ id: row.id, type, endpointId, removedAt, reportedBy });
    }
  }
  if (changes.length === 0) return back;
  // Each reconciler found by key, as the current states are (see writeCurrentStates).
  await sql`
    WITH c AS (
      SELECT * FROM unnest(${idArray(changes.map((change) => change.id))}::bigint[],
                           ${textArray(changes.map((change) => change.type))}::text[],
                           ${idArray(changes.map((change) => change.endpointId))}::bigint[],
                           ${timestamps(changes.map((change) => change.removedAt))},
                           ${textArray(changes.map((change) => change.reportedBy))}::text[]) AS c(id, type, endpoint_id, removed_at, reported_by)
    )
    UPDATE reconciler r
       SET type = c.type, manifests_endpoint_id = c.endpoint_id, removed_at = c.removed_at, reported_by = c.reported_by
      FROM c
     WHERE r.id = c.id AND r.id = ANY(ARRAY(SELECT id FROM c))`.execute(trx);
  return back;
}

/**
 * Rollouts count their subscribers by history and, while live, by current state; the history
 * insert queues the span its own reports reach. Changes of current state reach further (schema/0015):
 * a reconciler that takes a state on an endpoint joins every live rollout there, even one assigned
 * after its report, and one that moves leaves the live rollouts of the endpoint it left. One back
 * after a removal counts again, since its removal, wherever it reported.
 */
async function queueSubscriptionChanges(
  trx: Kysely<HubDatabase>,
  current: ReadonlyMap<number, CurrentState>,
  stored: ReadonlyMap<number, CurrentState>,
  revived: readonly { id: number; removedAt: Date }[],
): Promise<void> {
  // Per endpoint, from the earliest such change: a fleet's first reports join thousands of states
  // to a few endpoints.
  const since = new Map<number, Date>();
  const reached = (endpointId: number, at: Date): void => {
    const earliest = since.get(endpointId);
    if (earliest === undefined || at < earliest) since.set(endpointId, at);
  };
  for (const [id, state] of current) {
    const before = stored.get(id);
    if (before?.endpointId === state.endpointId) continue;
    reached(state.endpointId, state.observedAt);
    if (before !== undefined) reached(before.endpointId, state.observedAt);
  }
  if (since.size > 0) {
    await sql`${queueRolloutRefresh(
      sql`SELECT e, f, 'infinity'::timestamptz FROM unnest(${idArray([...since.keys()])}::bigint[], ${timestamps([...since.values()])}) AS x(e, f)`,
    )}`.execute(trx);
  }
  if (revived.length > 0) {
    await sql`SELECT kalypso_queue_subscriber_rollouts(${idArray(revived.map((back) => back.id))}::bigint[],
                                                       ${timestamps(revived.map((back) => back.removedAt))})`.execute(trx);
  }
}

/** Hosts: last seen moves forward (host clock, never past receipt); a stated type is kept. */
async function updateHosts(
  trx: Kysely<HubDatabase>,
  reports: readonly ResolvedStateReport[],
  receivedAt: Date,
): Promise<void> {
  const hosts = new Map<number, { seen: Date; type: string | undefined; typeAt: number }>();
  for (const report of reports) {
    const seen = report.observedAt < receivedAt ? report.observedAt : receivedAt;
    const host = hosts.get(report.hostId) ?? { seen, type: undefined, typeAt: -Infinity };
    if (seen > host.seen) host.seen = seen;
    if (report.hostType !== undefined && report.observedAt.getTime() >= host.typeAt) {
      host.type = report.hostType;
      host.typeAt = report.observedAt.getTime();
    }
    hosts.set(report.hostId, host);
  }
  const ids = [...hosts.keys()].sort((a, b) => a - b);
  const values = ids.map((id) => hosts.get(id)!);
  // Rows are locked in id order before the update, so concurrent batches cannot deadlock here.
  // Each host found by key, as the current states are (see writeCurrentStates).
  await sql`
    WITH v AS (
      SELECT * FROM unnest(${idArray(ids)}::bigint[], ${timestamps(values.map((value) => value.seen))},
                           ${textArray(values.map((value) => value.type ?? null))}::text[]) AS v(id, seen, type)
    ), locked AS (
      SELECT h.id FROM host h JOIN v ON v.id = h.id
       WHERE h.id = ANY(ARRAY(SELECT id FROM v))
         AND (h.last_seen_at < v.seen OR (v.type IS NOT NULL AND v.type <> h.type))
       ORDER BY h.id
         FOR NO KEY UPDATE OF h
    )
    UPDATE host h SET last_seen_at = greatest(h.last_seen_at, v.seen), type = coalesce(v.type, h.type)
      FROM v
     WHERE h.id = v.id AND h.id = ANY(ARRAY(SELECT id FROM locked))`.execute(trx);
}
