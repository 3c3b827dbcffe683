// "History": state transitions, newest first, filtered by any part of the model, paged with an
// opaque keyset cursor (stable under concurrent inserts, unlike offsets).
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { HistoryItem, HistoryPage } from '../../contract/answer-types.ts';
import type { DeploymentStatus } from '../../model/deployment-records.ts';
import type { HubDatabase } from '../database-schema.ts';
import { type FleetSlice, isoTime, joinVersionAt, rowLimit } from './report-context.ts';

export interface HistoryFilter extends FleetSlice {
  readonly reconciler?: string | undefined;
  readonly since?: Date | undefined;
  readonly until?: Date | undefined;
  readonly cursor?: HistoryCursor | undefined;
  readonly limit: number;
}

/** Position after the last transition of a page: (observed_at, history id) descending. */
export interface HistoryCursor {
  readonly observedAt: Date;
  readonly id: number;
}

export function encodeCursor(cursor: HistoryCursor): string {
  return Buffer.from(JSON.stringify([cursor.observedAt.toISOString(), cursor.id])).toString('base64url');
}

/** undefined when the text is not a cursor this hub issued. */
export function decodeCursor(text: string): HistoryCursor | undefined {
  try {
    const [observedAt, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    const time = new Date(String(observedAt));
    if (Number.isNaN(time.getTime()) || !Number.isSafeInteger(id)) return undefined;
    return { observedAt: time, id: id as number };
  } catch {
    return undefined;
  }
}

/**
 * A page of `limit` transitions, newest first. A transition whose endpoint belongs to several
 * (matching) deployment targets is one item per target.
 */
export async function historyReport(
  db: Kysely<HubDatabase>,
  filter: HistoryFilter,
): Promise<HistoryPage> {
  const rows = await readHistoryRows(db, filter);
  // A transition may come as several rows (one per target): the page is `limit` transitions, not rows.
  const transitions = [...new Set(rows.map((row) => row.id))];
  const kept = new Set(transitions.slice(0, filter.limit));
  const page = rows.filter((row) => kept.has(row.id));
  const last = page[page.length - 1];
  return {
    items: page.map(historyItemOf),
    nextCursor:
      transitions.length > filter.limit && last !== undefined ? encodeCursor({ observedAt: last.observed_at, id: last.id }) : null,
  };
}

interface HistoryRow {
  id: number;
  observed_at: Date;
  received_at: Date;
  host: string;
  reconciler: string;
  reconciler_type: string;
  endpoint: string;
  commit: string;
  status: DeploymentStatus;
  status_message: string;
  environment: string | null;
  workspace: string | null;
  application: string | null;
  workload: string | null;
  target: string | null;
  version: string | null;
}

/** The conditions on the deployment target a transition concerns. */
function targetConditionsOf(filter: HistoryFilter): RawBuilder<unknown>[] {
  return [
    filter.environment === undefined ? undefined : sql`t.environment = ${filter.environment}`,
    filter.workspace === undefined ? undefined : sql`t.workspace = ${filter.workspace}`,
    filter.application === undefined ? undefined : sql`t.application = ${filter.application}`,
    filter.workload === undefined ? undefined : sql`t.workload = ${filter.workload}`,
    filter.deploymentTarget === undefined ? undefined : sql`t.name = ${filter.deploymentTarget}`,
  ].filter((condition) => condition !== undefined);
}

/** The conditions that choose the page on the history table: reconciler, targets, time range, cursor. */
function pageConditionsOf(filter: HistoryFilter, anyTargetCondition: boolean): RawBuilder<unknown>[] {
  const reconcilerConditions = [
    filter.host === undefined ? undefined : sql`host.name = ${filter.host}`,
    filter.reconciler === undefined ? undefined : sql`r.name = ${filter.reconciler}`,
  ].filter((condition) => condition !== undefined);
  const cursor = filter.cursor;
  return [
    reconcilerConditions.length === 0
      ? undefined
      : sql`h.reconciler_id IN (SELECT r.id FROM reconciler r JOIN host ON host.id = r.host_id
                                WHERE ${sql.join(reconcilerConditions, sql` AND `)})`,
    anyTargetCondition ? sql`h.manifests_endpoint_id IN (SELECT manifests_endpoint_id FROM matching_targets)` : undefined,
    filter.since === undefined ? undefined : sql`h.observed_at >= ${filter.since}`,
    filter.until === undefined ? undefined : sql`h.observed_at < ${filter.until}`,
    cursor === undefined ? undefined : sql`(h.observed_at, h.id) < (${cursor.observedAt}::timestamptz, ${cursor.id}::bigint)`,
  ].filter((condition) => condition !== undefined);
}

/** The page's transitions (one more than asked, to tell whether another page follows), one row per matching target. */
async function readHistoryRows(db: Kysely<HubDatabase>, filter: HistoryFilter): Promise<HistoryRow[]> {
  const targetConditions = targetConditionsOf(filter);
  const matchingTargets = sql`
    SELECT t.id, t.name, t.manifests_endpoint_id, t.environment, t.workspace, t.application, t.workload
      FROM deployment_target_named t
     ${targetConditions.length === 0 ? sql`` : sql`WHERE ${sql.join(targetConditions, sql` AND `)}`}`;
  const pageConditions = pageConditionsOf(filter, targetConditions.length > 0);
  const rows = await sql<HistoryRow>`
    -- Not materialized: inlined where it is used, the page's probe is an index lookup per history row
    -- walked and the names are joined for the page's rows alone. Materialized, the planner probed the
    -- whole CTE for every row walked (400,000 comparisons for a page of prod at L, 110 ms) and named
    -- every target of the environment (docs/benchmarks/fleet-l-part10.md).
    WITH matching_targets AS NOT MATERIALIZED (${matchingTargets}),
    page AS (
      -- The page is chosen on the history table alone, in index order; names are joined after.
      SELECT h.id, h.observed_at FROM deployment_state_history h
       ${pageConditions.length === 0 ? sql`` : sql`WHERE ${sql.join(pageConditions, sql` AND `)}`}
       ORDER BY h.observed_at DESC, h.id DESC
       LIMIT ${rowLimit(filter.limit + 1)}
    )
    SELECT h.id, h.observed_at, h.received_at, host.name AS host, r.name AS reconciler, r.type AS reconciler_type,
           me.endpoint, h.gitops_commit_id AS commit, h.status, h.status_message, t.environment, t.workspace,
           t.application, t.workload, t.name AS target, v.version
      FROM page
      -- observed_at too: it names the partition, so each row is one index probe in one month.
      JOIN deployment_state_history h ON h.id = page.id AND h.observed_at = page.observed_at
      JOIN reconciler r ON r.id = h.reconciler_id
      JOIN host ON host.id = r.host_id
      JOIN manifests_endpoint me ON me.id = h.manifests_endpoint_id
      LEFT JOIN matching_targets t ON t.manifests_endpoint_id = h.manifests_endpoint_id
      ${joinVersionAt('t', sql`h.gitops_commit_id`, 'v')}
     ORDER BY h.observed_at DESC, h.id DESC, t.id`.execute(db);
  return rows.rows;
}

function historyItemOf(row: HistoryRow): HistoryItem {
  return {
    observedAt: isoTime(row.observed_at),
    receivedAt: isoTime(row.received_at),
    host: row.host,
    reconciler: row.reconciler,
    reconcilerType: row.reconciler_type,
    manifestsEndpoint: row.endpoint,
    commit: row.commit,
    status: row.status,
    statusMessage: row.status_message,
    environment: row.environment,
    workspace: row.workspace,
    application: row.application,
    workload: row.workload,
    deploymentTarget: row.target,
    version: row.version,
  };
}
