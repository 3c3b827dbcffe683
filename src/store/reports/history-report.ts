// "History": state transitions, newest first, filtered by any part of the model, paged with an
// opaque keyset cursor (stable under concurrent inserts, unlike offsets).
import { type Kysely, sql } from 'kysely';
import type { DeploymentStatus } from '../../model/deployment-records.ts';
import type { HubDatabase } from '../database-schema.ts';

export interface HistoryFilter {
  readonly environment?: string | undefined;
  readonly workspace?: string | undefined;
  readonly application?: string | undefined;
  readonly workload?: string | undefined;
  readonly deploymentTarget?: string | undefined;
  readonly host?: string | undefined;
  readonly reconciler?: string | undefined;
  readonly since?: Date | undefined;
  readonly until?: Date | undefined;
  readonly cursor?: HistoryCursor | undefined;
  readonly limit: number;
}

/** Position after the last item of a page: (observed_at, history id, target id) descending. */
export interface HistoryCursor {
  readonly observedAt: Date;
  readonly id: number;
  readonly targetId: number;
}

export interface HistoryItem {
  observedAt: Date;
  receivedAt: Date;
  host: string;
  reconciler: string;
  reconcilerType: string;
  manifestsEndpoint: string;
  commit: string;
  status: DeploymentStatus;
  statusMessage: string;
  /** The deployment target this transition concerns, when its endpoint belongs to one. */
  environment: string | null;
  workspace: string | null;
  application: string | null;
  workload: string | null;
  deploymentTarget: string | null;
  /** The version whose assignment carries this commit, if any. */
  version: string | null;
}

export function encodeCursor(cursor: HistoryCursor): string {
  return Buffer.from(JSON.stringify([cursor.observedAt.toISOString(), cursor.id, cursor.targetId])).toString('base64url');
}

/** undefined when the text is not a cursor this hub issued. */
export function decodeCursor(text: string): HistoryCursor | undefined {
  try {
    const [observedAt, id, targetId] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    const time = new Date(String(observedAt));
    if (Number.isNaN(time.getTime()) || !Number.isSafeInteger(id) || !Number.isSafeInteger(targetId)) return undefined;
    return { observedAt: time, id: id as number, targetId: targetId as number };
  } catch {
    return undefined;
  }
}

export async function historyReport(
  db: Kysely<HubDatabase>,
  filter: HistoryFilter,
): Promise<{ items: HistoryItem[]; nextCursor: string | null }> {
  const text = (value: string | undefined) => value ?? null;
  const byTarget =
    filter.environment !== undefined ||
    filter.workspace !== undefined ||
    filter.application !== undefined ||
    filter.workload !== undefined ||
    filter.deploymentTarget !== undefined;
  const cursor = filter.cursor;
  const rows = await sql<{
    id: number;
    target_id: number;
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
  }>`
    SELECT h.id, coalesce(t.id, 0)::int AS target_id, h.observed_at, h.received_at, host.name AS host,
           r.name AS reconciler, r.type AS reconciler_type, me.endpoint, h.gitops_commit_id AS commit,
           h.status, h.status_message, e.name AS environment, ws.name AS workspace, app.name AS application,
           w.name AS workload, t.name AS target, v.version
      FROM deployment_state_history h
      JOIN reconciler r ON r.id = h.reconciler_id
      JOIN host ON host.id = r.host_id
      JOIN manifests_endpoint me ON me.id = h.manifests_endpoint_id
      ${byTarget ? sql`JOIN` : sql`LEFT JOIN`} deployment_target t ON t.manifests_endpoint_id = h.manifests_endpoint_id
      LEFT JOIN environment e ON e.id = t.environment_id
      LEFT JOIN workload w ON w.id = t.workload_id
      LEFT JOIN application app ON app.id = w.application_id
      LEFT JOIN workspace ws ON ws.id = app.workspace_id
      LEFT JOIN deployment_assignment a ON a.deployment_target_id = t.id AND a.gitops_commit_id = h.gitops_commit_id
      LEFT JOIN workload_version v ON v.id = a.workload_version_id
     WHERE (${text(filter.host)}::text IS NULL OR host.name = ${text(filter.host)}::text)
       AND (${text(filter.reconciler)}::text IS NULL OR r.name = ${text(filter.reconciler)}::text)
       AND (${text(filter.environment)}::text IS NULL OR e.name = ${text(filter.environment)}::text)
       AND (${text(filter.workspace)}::text IS NULL OR ws.name = ${text(filter.workspace)}::text)
       AND (${text(filter.application)}::text IS NULL OR app.name = ${text(filter.application)}::text)
       AND (${text(filter.workload)}::text IS NULL OR w.name = ${text(filter.workload)}::text)
       AND (${text(filter.deploymentTarget)}::text IS NULL OR t.name = ${text(filter.deploymentTarget)}::text)
       AND (${filter.since ?? null}::timestamptz IS NULL OR h.observed_at >= ${filter.since ?? null}::timestamptz)
       AND (${filter.until ?? null}::timestamptz IS NULL OR h.observed_at < ${filter.until ?? null}::timestamptz)
       ${
         cursor === undefined
           ? sql``
           : sql`AND (h.observed_at, h.id, coalesce(t.id, 0)) < (${cursor.observedAt}::timestamptz, ${cursor.id}::bigint, ${cursor.targetId}::bigint)`
       }
     ORDER BY h.observed_at DESC, h.id DESC, coalesce(t.id, 0) DESC
     LIMIT ${filter.limit + 1}`.execute(db);
  const page = rows.rows.slice(0, filter.limit);
  const last = page[page.length - 1];
  return {
    items: page.map((row) => ({
      observedAt: row.observed_at,
      receivedAt: row.received_at,
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
    })),
    nextCursor:
      rows.rows.length > filter.limit && last !== undefined
        ? encodeCursor({ observedAt: last.observed_at, id: last.id, targetId: last.target_id })
        : null,
  };
}
