// The rollout gate: has commit C of manifests endpoint E been applied by every reconciler that
// pulls E (its subscribers)? The judgement is the database's (kalypso_gate, schema/0010): on C or on
// a commit witnessed to have come after C on E's branch, a subscriber's own status counts; on any
// other commit it is in progress; stale never counts as success.
import { type Kysely, sql } from 'kysely';
import type { HubDatabase } from '../database-schema.ts';
import { addStatus, type EffectiveStatus, emptyCounts, type ReportContext, staleBefore, type StatusCounts } from './report-context.ts';

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
  /** Set when the subscriber applied a commit that came after C on its branch instead of C. */
  supersededBy: string | null;
}

export interface RolloutState extends StatusCounts {
  manifestsEndpoint: string;
  commit: string;
  /** Every subscriber succeeded or failed (none in progress or stale), and there is at least one. */
  settled: boolean;
  subscribers: RolloutSubscriber[];
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

export function subscriberOf(row: GateRow, commit: string): RolloutSubscriber {
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
    observedAt: row.observed_at,
    lastSeenAt: row.last_seen_at,
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
): Promise<RolloutState> {
  const rows = await gateRows(db, context, sql`SELECT id FROM manifests_endpoint WHERE endpoint = ${endpoint}`, commit);
  const counts = emptyCounts();
  const subscribers = rows.map((row) => {
    addStatus(counts, row.status);
    return subscriberOf(row, commit);
  });
  return { manifestsEndpoint: endpoint, commit, ...counts, settled: isSettled(counts), subscribers };
}
