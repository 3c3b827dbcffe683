// "Drift": reconcilers that are not where their deployment target wants them — not on the desired
// rollout (neither the desired commit nor another commit that runs the desired version: a merge for
// another target moves every cluster of the branch, and is no drift), failing, or stale — and since
// when. The rule is the database's (kalypso_judge_drift, schema/0012), kept current on write in
// drift_item; this report names a page of it, longest-standing first, and counts it all.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Drift, DriftPage, DriftTotals } from '../../contract/answer-types.ts';
import type { HubDatabase } from '../database-schema.ts';
import { summariesCurrent } from '../summary-refresh.ts';
import { type EffectiveStatus, isoTime, joinVersionAt, type ReportContext } from './report-context.ts';

type DriftReason = Drift['reasons'][number];

/** Where a page starts: after this (since, reconciler, target) — since as PostgreSQL wrote it, to the microsecond. */
export interface DriftCursor {
  readonly since: string;
  readonly reconcilerId: number;
  readonly targetId: number;
}

export interface DriftFilter {
  readonly environment?: string | undefined;
  readonly limit: number;
  readonly after?: DriftCursor | undefined;
}

export function encodeDriftCursor(cursor: DriftCursor): string {
  return Buffer.from(JSON.stringify([cursor.since, cursor.reconcilerId, cursor.targetId])).toString('base64url');
}

/** undefined when the text is not a cursor this hub issued. */
export function decodeDriftCursor(text: string): DriftCursor | undefined {
  try {
    const [since, reconcilerId, targetId] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    if (typeof since !== 'string' || Number.isNaN(new Date(since).getTime())) return undefined;
    if (!Number.isSafeInteger(reconcilerId) || !Number.isSafeInteger(targetId)) return undefined;
    return { since, reconcilerId: reconcilerId as number, targetId: targetId as number };
  } catch {
    return undefined;
  }
}

export async function driftReport(
  db: Kysely<HubDatabase>,
  context: ReportContext,
  filter: DriftFilter,
): Promise<DriftPage> {
  await summariesCurrent(db, context.asOf);
  const inEnvironment =
    filter.environment === undefined ? sql`true` : sql`d.environment_id = (SELECT id FROM environment WHERE name = ${filter.environment})`;
  const [page, totals] = await Promise.all([readDriftPage(db, inEnvironment, filter), countDrift(db, inEnvironment)]);
  const rows = page.slice(0, filter.limit);
  const last = rows[rows.length - 1];
  return {
    items: rows.map((row) => driftItemOf(row, context.asOf)),
    nextCursor:
      page.length > filter.limit && last !== undefined
        ? encodeDriftCursor({ since: last.since_exact, reconcilerId: Number(last.reconciler_id), targetId: Number(last.target_id) })
        : null,
    totals,
  };
}

interface DriftRow {
  since_exact: string;
  reconciler_id: number;
  target_id: number;
  not_on_desired_rollout: boolean;
  failing: boolean;
  stale: boolean;
  drifting_since: Date;
  environment: string;
  workspace: string;
  application: string;
  workload: string;
  target: string;
  host: string;
  reconciler: string;
  reconciler_type: string;
  desired_version: string | null;
  desired_commit: string | null;
  applied_commit: string;
  applied_version: string | null;
  reported_status: EffectiveStatus;
  status_message: string;
}

/** The page after the cursor, longest-standing first: one row more than asked, to tell whether another follows. */
async function readDriftPage(db: Kysely<HubDatabase>, inEnvironment: RawBuilder<unknown>, filter: DriftFilter): Promise<DriftRow[]> {
  const after =
    filter.after === undefined
      ? sql`true`
      : sql`(d.drifting_since, d.reconciler_id, d.deployment_target_id) > (${filter.after.since}::timestamptz, ${filter.after.reconcilerId}::bigint, ${filter.after.targetId}::bigint)`;
  const page = await sql<DriftRow>`
      WITH page AS (
        -- The page from the index first; names afterwards.
        SELECT * FROM drift_item d
         WHERE ${inEnvironment} AND ${after}
         ORDER BY d.drifting_since, d.reconciler_id, d.deployment_target_id
         LIMIT ${filter.limit + 1}
      )
      SELECT d.drifting_since::text AS since_exact, d.reconciler_id, d.deployment_target_id AS target_id,
             d.not_on_desired_rollout, d.failing, d.stale, d.drifting_since,
             t.environment, t.workspace, t.application, t.workload, t.name AS target, h.name AS host, r.name AS reconciler, r.type AS reconciler_type,
             cv.version AS desired_version, ca.gitops_commit_id AS desired_commit,
             s.gitops_commit_id AS applied_commit, av.version AS applied_version, s.status AS reported_status, s.status_message
        FROM page d
        JOIN deployment_target_named t ON t.id = d.deployment_target_id
        JOIN deployment_state s ON s.reconciler_id = d.reconciler_id
        JOIN host h ON h.id = d.host_id
        JOIN reconciler r ON r.id = d.reconciler_id
        LEFT JOIN deployment_assignment ca ON ca.id = t.current_assignment_id
        LEFT JOIN workload_version cv ON cv.id = ca.workload_version_id
        ${joinVersionAt('t', sql`s.gitops_commit_id`, 'av')}
       ORDER BY d.drifting_since, d.reconciler_id, d.deployment_target_id`.execute(db);
  return page.rows;
}

/** Every drifting (reconciler, target) of the slice, not only the page's. */
async function countDrift(db: Kysely<HubDatabase>, inEnvironment: RawBuilder<unknown>): Promise<DriftTotals> {
  const totals = await sql<{ drifting: number; not_on_desired: number; failing: number; stale: number }>`
      SELECT count(*)::int AS drifting, count(*) FILTER (WHERE d.not_on_desired_rollout)::int AS not_on_desired,
             count(*) FILTER (WHERE d.failing)::int AS failing, count(*) FILTER (WHERE d.stale)::int AS stale
        FROM drift_item d WHERE ${inEnvironment}`.execute(db);
  const counted = totals.rows[0]!;
  return { drifting: counted.drifting, notOnDesiredCommit: counted.not_on_desired, failing: counted.failing, stale: counted.stale };
}

function driftItemOf(row: DriftRow, asOf: Date): Drift {
  return {
    environment: row.environment,
    workspace: row.workspace,
    application: row.application,
    workload: row.workload,
    deploymentTarget: row.target,
    host: row.host,
    reconciler: row.reconciler,
    reconcilerType: row.reconciler_type,
    desiredVersion: row.desired_version,
    desiredCommit: row.desired_commit,
    appliedCommit: row.applied_commit,
    appliedVersion: row.applied_version,
    status: row.stale ? 'stale' : row.reported_status,
    statusMessage: row.status_message,
    reasons: driftReasons(row),
    driftingSince: isoTime(row.drifting_since),
    driftingForSeconds: Math.max(0, Math.round((asOf.getTime() - row.drifting_since.getTime()) / 1_000)),
  };
}

function driftReasons(row: DriftRow): DriftReason[] {
  return [
    ...(row.not_on_desired_rollout ? (['not_on_desired_commit'] as const) : []),
    ...(row.failing ? (['failing'] as const) : []),
    ...(row.stale ? (['stale'] as const) : []),
  ];
}
