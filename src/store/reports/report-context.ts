// What every report needs to judge freshness: the moment it describes and the stale-after
// setting. One definition of "stale" serves every endpoint.
import { type RawBuilder, sql } from 'kysely';

export interface ReportContext {
  /** The moment the report describes (normally now). */
  readonly asOf: Date;
  /** A reconciler whose last report is older than this is stale. */
  readonly staleAfterMs: number;
}

export type EffectiveStatus = 'success' | 'failure' | 'in_progress' | 'stale';

/** The newest moment a reconciler is known to have been alive: host clock, capped at receipt. */
export function lastSeen(state: string): RawBuilder<Date> {
  return sql<Date>`least(${sql.ref(`${state}.last_observed_at`)}, ${sql.ref(`${state}.last_received_at`)})`;
}

/** The cut-off before which a reconciler's last report makes it stale. */
export function staleBefore(context: ReportContext): Date {
  return new Date(context.asOf.getTime() - context.staleAfterMs);
}

/** A reconciler's status as reports show it: its reported status, or `stale` when silent too long. */
export function effectiveStatus(state: string, context: ReportContext): RawBuilder<EffectiveStatus> {
  return sql<EffectiveStatus>`CASE WHEN ${lastSeen(state)} < ${staleBefore(context)}::timestamptz THEN 'stale'
                                   ELSE ${sql.ref(`${state}.status`)}::text END`;
}

export interface StatusCounts {
  total: number;
  succeeded: number;
  failed: number;
  inProgress: number;
  stale: number;
}

export function emptyCounts(): StatusCounts {
  return { total: 0, succeeded: 0, failed: 0, inProgress: 0, stale: 0 };
}

export function addStatus(counts: StatusCounts, status: EffectiveStatus, amount = 1): void {
  counts.total += amount;
  if (status === 'success') counts.succeeded += amount;
  else if (status === 'failure') counts.failed += amount;
  else if (status === 'in_progress') counts.inProgress += amount;
  else counts.stale += amount;
}

export function mergeCounts(into: StatusCounts, from: StatusCounts): void {
  into.total += from.total;
  into.succeeded += from.succeeded;
  into.failed += from.failed;
  into.inProgress += from.inProgress;
  into.stale += from.stale;
}

/**
 * SQL aggregates producing the StatusCounts columns (total, succeeded, failed, in_progress, stale),
 * counting `counted` (an id; DISTINCT when one reconciler can appear on several joined rows).
 */
export function statusCountColumns(
  status: RawBuilder<EffectiveStatus>,
  counted: RawBuilder<unknown>,
  options: { distinct: boolean },
): RawBuilder<unknown> {
  const what = options.distinct ? sql`DISTINCT ${counted}` : counted;
  const count = (filter: EffectiveStatus) => sql`count(${what}) FILTER (WHERE ${status} = ${filter})::int`;
  return sql`count(${what})::int AS total, ${count('success')} AS succeeded, ${count('failure')} AS failed,
             ${count('in_progress')} AS in_progress, ${count('stale')} AS stale`;
}

export interface StatusCountRow {
  total: number;
  succeeded: number;
  failed: number;
  in_progress: number;
  stale: number;
}

export function countsFromRow(row: StatusCountRow): StatusCounts {
  return { total: row.total, succeeded: row.succeeded, failed: row.failed, inProgress: row.in_progress, stale: row.stale };
}
