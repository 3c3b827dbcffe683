// The projector of --append-first (issue 40, schema/0031): folds the acknowledged reports waiting
// in pending_report into everything derived from them, in the order they were appended, with the
// same code and rules as the full write (write-real-state.ts: history of transitions, the
// late/out-of-order rule, current state, reconcilers, hosts, commit evidence; its statements and
// triggers queue the summaries and rollouts, whose refresh marks the notifications' endpoints).
//
// One projector at a time across every hub on the database: each batch runs under an advisory
// lock, taken by the background loop of whichever hub gets it first and by readers that must see
// what was acknowledged before they asked (projectionCurrent). A batch deletes the rows it folded
// in its own transaction, so a hub or database killed mid-batch leaves them pending: the next
// batch, on any hub, folds them again from the start.
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DeploymentStatus } from '../model/deployment-records.ts';
import type { HubDatabase } from './database-schema.ts';
import type { CommitEvidence, RecordedEvidence } from './commit-evidence.ts';
import { underRefreshLock } from './refresh-lock.ts';
import { isRepeatedHistoryRow, isTransientConflict } from './store-errors.ts';
import { type ResolvedStateReport, writeRealState } from './write-real-state.ts';

const PROJECTOR_LOCK = 'kalypso_projector';
const MAX_ATTEMPTS = 5;

interface PendingRow {
  id: string;
  reconciler_id: string;
  host_id: string;
  manifests_endpoint_id: string;
  gitops_commit_id: string;
  status: DeploymentStatus;
  status_message: string;
  observed_ms: number;
  received_ms: number;
  host_type: string | null;
  reconciler_type: string;
  reported_by: string | null;
  details: string | null;
}

export interface ProjectOptions {
  /** false: give up at once (undefined) when another projection holds the lock — the background loop's way. */
  readonly wait: boolean;
  /** At most this many reports a batch. */
  readonly limit: number;
  /** Evidence this hub recorded already: not written again. */
  readonly recorded?: RecordedEvidence;
}

/** What one batch folded: how many reports, and the highest id among them. */
export interface ProjectedBatch {
  readonly reports: number;
  readonly lastId: number | undefined;
}

/**
 * Folds the oldest `limit` pending reports. Retried as the full write is: on deadlocks with a
 * writer of desired state or removals (those write directly, see record-writer.ts), and once with
 * every history row checked when one it trusted to be new was there already.
 */
export async function projectPending(db: Kysely<HubDatabase>, options: ProjectOptions): Promise<ProjectedBatch | undefined> {
  let trustNewer = true;
  for (let attempt = 1; ; attempt += 1) {
    try {
      const result = await underRefreshLock(db, PROJECTOR_LOCK, options.wait, (trx) => projectBatch(trx, options, trustNewer));
      if (result === undefined) return undefined;
      options.recorded?.remember(result.evidence);
      return { reports: result.reports, lastId: result.lastId };
    } catch (error) {
      if (trustNewer && isRepeatedHistoryRow(error)) {
        trustNewer = false;
        continue;
      }
      if (!isTransientConflict(error) || attempt >= MAX_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
    }
  }
}

async function projectBatch(
  trx: Transaction<HubDatabase>,
  options: ProjectOptions,
  trustNewer: boolean,
): Promise<{ reports: number; lastId: number | undefined; evidence: CommitEvidence }> {
  // Deleted first: under the lock nobody else takes them, and if the batch fails they come back.
  const taken = await sql<PendingRow>`
    DELETE FROM pending_report
     WHERE id IN (SELECT id FROM pending_report ORDER BY id LIMIT ${options.limit})
    RETURNING id, reconciler_id, manifests_endpoint_id, host_id, gitops_commit_id, status, status_message,
              (extract(epoch FROM observed_at) * 1000)::float8 AS observed_ms,
              (extract(epoch FROM received_at) * 1000)::float8 AS received_ms,
              host_type, reconciler_type, reported_by, details::text AS details`.execute(trx);
  // By receipt, then id: concurrent appends draw their ids from one sequence and interleave, so in
  // id order alone an acknowledged write's reports fall into dozens of runs (4,637 folds of 78
  // reports for 360 writes of 1,000 in the bench), each paying the fold's statements.
  const rows = taken.rows.sort((a, b) => a.received_ms - b.received_ms || Number(a.id) - Number(b.id));
  const evidence: CommitEvidence = { sightings: [], successions: [] };
  // One fold per acknowledged write (rows of one receipt time): each keeps its receipt time in
  // history and in "last received", as the full write does.
  for (let start = 0; start < rows.length; ) {
    let end = start + 1;
    while (end < rows.length && rows[end]!.received_ms === rows[start]!.received_ms) end += 1;
    const reports = rows.slice(start, end).map(resolvedReport);
    const real = await writeRealState(trx, reports, new Date(rows[start]!.received_ms), {
      ...(options.recorded === undefined ? {} : { recorded: options.recorded }),
      trustNewer,
    });
    evidence.sightings.push(...real.evidence.sightings);
    evidence.successions.push(...real.evidence.successions);
    start = end;
  }
  const lastId = rows.reduce<number | undefined>((max, row) => Math.max(max ?? 0, Number(row.id)), undefined);
  return { reports: rows.length, lastId, evidence };
}

function resolvedReport(row: PendingRow): ResolvedStateReport {
  return {
    reconcilerId: Number(row.reconciler_id),
    hostId: Number(row.host_id),
    endpointId: Number(row.manifests_endpoint_id),
    commitId: row.gitops_commit_id,
    status: row.status,
    message: row.status_message,
    observedAt: new Date(row.observed_ms),
    hostType: row.host_type ?? undefined,
    reconcilerType: row.reconciler_type,
    reportedBy: row.reported_by ?? undefined,
    details: row.details ?? undefined,
  };
}

/** How far the projection is behind: reports pending (an upper bound: ids rolled back leave gaps) and the age of the oldest. */
export interface ProjectionBacklog {
  readonly rows: number;
  readonly oldestReceivedAt: Date | undefined;
}

/** Two index probes, whatever the backlog: cheap enough for every tick of every hub. */
export async function projectionBacklog(db: Kysely<HubDatabase>): Promise<ProjectionBacklog> {
  const result = await sql<{ first: string | null; last: string | null; received_ms: number | null }>`
    SELECT o.id AS first, (SELECT max(id) FROM pending_report) AS last,
           (extract(epoch FROM o.received_at) * 1000)::float8 AS received_ms
      FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT id, received_at FROM pending_report ORDER BY id LIMIT 1) o ON true`.execute(db);
  const { first, last, received_ms: receivedMs } = result.rows[0]!;
  if (first === null || last === null || receivedMs === null) return { rows: 0, oldestReceivedAt: undefined };
  return { rows: Number(last) - Number(first) + 1, oldestReceivedAt: new Date(receivedMs) };
}

/**
 * What a reader does before it answers (the API, the gate): fold in every report acknowledged before
 * it asked, so that a pipeline that reports and then asks gets its own writes. Nothing pending (the
 * usual case, and always without --append-first): one index probe.
 */
export async function projectionCurrent(db: Kysely<HubDatabase>, limit = PROJECTION_TUNING.batch): Promise<void> {
  const pending = await sql<{ last: string | null }>`SELECT max(id) AS last FROM pending_report`.execute(db);
  const through = pending.rows[0]!.last;
  if (through === null) return;
  for (;;) {
    const batch = await projectPending(db, { wait: true, limit });
    // Done once past every report that was there when asked (the background loop may have taken them).
    if (batch === undefined || batch.lastId === undefined || batch.lastId >= Number(through)) return;
  }
}

export interface ProjectionTuning {
  readonly batch: number;
  readonly idleMs: number;
  readonly lingerMs: number;
  readonly observeMs: number;
  readonly retryMs: number;
}

export const PROJECTION_TUNING: ProjectionTuning = {
  /**
   * Reports a batch folds at most. A batch that waited (the loop was busy, or lagging) folds what
   * accumulated in one transaction; larger batches hold the lock longer for readers that wait on it.
   */
  batch: 8_000,
  /** How long the loop sleeps when nothing is pending, unless a write wakes it first. */
  idleMs: 100,
  /** How long the loop waits after a batch that folded something, so that the next takes more at once. */
  lingerMs: 50,
  /** How often the loop measures the backlog for /metrics while it is folding. */
  observeMs: 1_000,
  /** After a failure (the database away): the loop tries again this much later. */
  retryMs: 1_000,
};
