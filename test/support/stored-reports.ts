// What the store holds for a set of hosts: history rows and current states, in the shape of
// report-stream.ts's expectations, read with plain SQL (not through the hub under test).
import pg from 'pg';
import { sortReports, type StoredReport } from './report-stream.ts';

export type Query = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<R[]>;

/** A query function over short-lived connections to `url`. */
export function queryAt(url: string): Query {
  return async <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  };
}

interface Row {
  host: string;
  reconciler: string;
  commit: string;
  status: string;
  observed_at: Date;
}

const fromRow = (row: Row): StoredReport => ({
  host: row.host,
  reconciler: row.reconciler,
  commit: row.commit,
  status: row.status,
  observedAt: row.observed_at.toISOString(),
});

/** Every history row of the hosts whose names start with `hostPrefix` (duplicates kept). */
export async function storedHistory(query: Query, hostPrefix: string): Promise<StoredReport[]> {
  const rows = await query<Row>(
    `SELECT host.name AS host, r.name AS reconciler, h.gitops_commit_id AS commit, h.status::text AS status, h.observed_at
       FROM deployment_state_history h
       JOIN reconciler r ON r.id = h.reconciler_id JOIN host ON host.id = r.host_id
      WHERE host.name LIKE $1 || '-%'`,
    [hostPrefix],
  );
  return sortReports(rows.map(fromRow));
}

export interface StoredCurrent extends StoredReport {
  readonly message: string;
  readonly lastObservedAt: string;
  readonly endpoint: string;
}

/** The current state of every reconciler on the hosts whose names start with `hostPrefix`. */
export async function storedCurrent(query: Query, hostPrefix: string): Promise<StoredCurrent[]> {
  const rows = await query<Row & { message: string; last_observed_at: Date; endpoint: string }>(
    `SELECT host.name AS host, r.name AS reconciler, s.gitops_commit_id AS commit, s.status::text AS status, s.observed_at,
            s.status_message AS message, s.last_observed_at, e.endpoint
       FROM deployment_state s
       JOIN reconciler r ON r.id = s.reconciler_id JOIN host ON host.id = r.host_id
       JOIN manifests_endpoint e ON e.id = s.manifests_endpoint_id
      WHERE host.name LIKE $1 || '-%'`,
    [hostPrefix],
  );
  return sortReports(
    rows.map((row) => ({ ...fromRow(row), message: row.message, lastObservedAt: row.last_observed_at.toISOString(), endpoint: row.endpoint })),
  );
}

/** The current state without the columns a plain report set does not predict. */
export function asReports(rows: readonly StoredCurrent[]): StoredReport[] {
  return rows.map(({ host, reconciler, commit, status, observedAt }) => ({ host, reconciler, commit, status, observedAt }));
}

/** A reconciler's current state on a host, with its type, endpoint and message. */
export interface HostStateRow {
  reconciler: string;
  type: string;
  endpoint: string;
  commit: string;
  status: string;
  message: string;
}

/** The current state of every reconciler on `host`, by reconciler name. */
export function hostCurrentState(query: Query, host: string): Promise<HostStateRow[]> {
  return query<HostStateRow>(
    `SELECT r.name AS reconciler, r.type, e.endpoint, s.gitops_commit_id AS commit, s.status, s.status_message AS message
       FROM deployment_state s JOIN reconciler r ON r.id = s.reconciler_id JOIN host h ON h.id = r.host_id
       JOIN manifests_endpoint e ON e.id = s.manifests_endpoint_id
      WHERE h.name = $1 ORDER BY r.name`,
    [host],
  );
}
