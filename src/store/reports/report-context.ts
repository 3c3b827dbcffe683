// What every report needs to judge freshness: the moment it describes and the stale-after
// setting. One definition of "stale" serves every endpoint.
import { type RawBuilder, sql } from 'kysely';
import type { StatusCounts, TargetNames } from '../../contract/answer-types.ts';
import type { EffectiveStatus } from '../../model/deployment-records.ts';

export interface ReportContext {
  /** The moment the report describes (normally now). */
  readonly asOf: Date;
  /** A reconciler whose last report is older than this is stale. */
  readonly staleAfterMs: number;
}

/** The names that slice the fleet; a report with none of them covers it all. */
export interface FleetSlice {
  readonly environment?: string | undefined;
  readonly workspace?: string | undefined;
  readonly application?: string | undefined;
  readonly workload?: string | undefined;
  readonly deploymentTarget?: string | undefined;
  readonly host?: string | undefined;
}

export type { EffectiveStatus, StatusCounts, TargetNames };

/** A moment as the answers carry it: ISO 8601 in UTC with milliseconds (what JSON makes of a Date). */
export function isoTime(moment: Date): string {
  return moment.toISOString();
}

export function isoTimeOrNull(moment: Date | null): string | null {
  return moment === null ? null : moment.toISOString();
}

/**
 * A page's row limit, written into the statement's text rather than bound. Bound, PostgreSQL plans
 * a kept statement for an unknown limit (a tenth of the rows) and rejects that generic plan, so it
 * planned the statement again at every call: 6-8 ms of a history page's 13 at fleet S. Pages come
 * in a few sizes, so a few texts are kept (docs/benchmarks/fleet-l-part10.md).
 */
export function rowLimit(rows: number): RawBuilder<unknown> {
  if (!Number.isSafeInteger(rows) || rows < 0) throw new RangeError(`row limit must be a whole number ≥ 0, not ${rows}`);
  return sql.lit(rows);
}

/** The newest moment a reconciler is known to have been alive: host clock, capped at receipt. */
export function lastSeen(state: string): RawBuilder<Date> {
  return sql<Date>`${sql.ref(`${state}.last_seen_at`)}`;
}

/** The cut-off before which a reconciler's last report makes it stale. */
export function staleBefore(context: ReportContext): Date {
  return new Date(context.asOf.getTime() - context.staleAfterMs);
}

/**
 * A reconciler's status as reports show it: its reported status, or `stale` when silent too long —
 * the database's definition (kalypso_effective_status, schema/0012), which the views use too.
 */
export function effectiveStatus(state: string, context: ReportContext): RawBuilder<EffectiveStatus> {
  return sql<EffectiveStatus>`kalypso_effective_status(${sql.ref(`${state}.status`)}, ${lastSeen(state)}, ${staleBefore(context)}::timestamptz)`;
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
 * The StatusCounts columns (total, succeeded, failed, in_progress, stale) summed from rows of
 * endpoint_status_count (`counts`: status, reconcilers), the summary kept current on write (schema/0012).
 */
export function summedStatusCountColumns(counts: string): RawBuilder<unknown> {
  const n = sql.ref(`${counts}.reconcilers`);
  const status = sql.ref(`${counts}.status`);
  const sum = (value: EffectiveStatus) => sql`coalesce(sum(${n}) FILTER (WHERE ${status} = ${value}), 0)::int`;
  return sql`coalesce(sum(${n}), 0)::int AS total, ${sum('success')} AS succeeded, ${sum('failure')} AS failed,
             ${sum('in_progress')} AS in_progress, ${sum('stale')} AS stale`;
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

/**
 * LEFT JOINs naming the workload version that runs at commit `commit` (an SQL expression) of the
 * deployment target `target` (an alias with `id`): the target's own assignment of the commit, or
 * the one it carries (schema/0010, target_commit). Adds the aliases `<as>_assignment` (with
 * `rollout_id`) and `<as>` (the workload_version). Aliases are the caller's constants.
 */
export function joinVersionAt(target: string, commit: RawBuilder<unknown>, as: string): RawBuilder<unknown> {
  const tc = sql.raw(`${as}_tc`);
  const assignment = sql.raw(`${as}_assignment`);
  const version = sql.raw(as);
  return sql`LEFT JOIN target_commit ${tc} ON ${tc}.deployment_target_id = ${sql.ref(`${target}.id`)} AND ${tc}.gitops_commit_id = ${commit}
             LEFT JOIN deployment_assignment ${assignment} ON ${assignment}.id = ${tc}.assignment_id
             LEFT JOIN workload_version ${version} ON ${version}.id = ${assignment}.workload_version_id`;
}
