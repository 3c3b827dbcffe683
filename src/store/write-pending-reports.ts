// The acknowledged write of --append-first (issue 40, schema/0031): a batch's real-state reports
// become rows of pending_report in one statement, and that is all an export waits for. Everything
// derived from them is the projector's (projector.ts). Ids are resolved before (dimension-ids.ts),
// outside any transaction, as for the full write.
import { type Kysely, sql } from 'kysely';
import type { HubDatabase } from './database-schema.ts';
import { idArray, textArray, timestamps } from './pg-arrays.ts';
import { MissingReferenceError } from './store-errors.ts';
import type { ResolvedStateReport } from './write-real-state.ts';

/**
 * Appends `reports`, all received at `receivedAt`. The ids come from the hub's cache, and the
 * table has no foreign keys: the same statement counts the reconcilers and endpoints they name and
 * inserts nothing when one is missing (a database restored from a backup), so that the writer looks
 * its ids up again instead of acknowledging reports the projector could never fold.
 */
export async function appendPendingReports(db: Kysely<HubDatabase>, reports: readonly ResolvedStateReport[], receivedAt: Date): Promise<void> {
  if (reports.length === 0) return;
  const reconcilers = idArray([...new Set(reports.map((report) => report.reconcilerId))]);
  const endpoints = idArray([...new Set(reports.map((report) => report.endpointId))]);
  const result = await sql<{ inserted: number; reconcilers: number; endpoints: number }>`
    WITH named AS MATERIALIZED (
      SELECT (SELECT count(*)::int FROM reconciler WHERE id = ANY(${reconcilers}::bigint[])) AS reconcilers,
             (SELECT count(*)::int FROM manifests_endpoint WHERE id = ANY(${endpoints}::bigint[])) AS endpoints
    ), inserted AS (
      INSERT INTO pending_report
             (reconciler_id, host_id, manifests_endpoint_id, gitops_commit_id, status, status_message, observed_at,
              host_type, reconciler_type, reported_by, details, received_at)
      SELECT r.*, ${receivedAt}::timestamptz
        FROM unnest(${idArray(reports.map((report) => report.reconcilerId))}::bigint[],
                    ${idArray(reports.map((report) => report.hostId))}::bigint[],
                    ${idArray(reports.map((report) => report.endpointId))}::bigint[],
                    ${textArray(reports.map((report) => report.commitId))}::text[],
                    ${textArray(reports.map((report) => report.status))}::deployment_status[],
                    ${textArray(reports.map((report) => report.message))}::text[],
                    ${timestamps(reports.map((report) => report.observedAt))},
                    ${textArray(reports.map((report) => report.hostType ?? null))}::text[],
                    ${textArray(reports.map((report) => report.reconcilerType))}::text[],
                    ${textArray(reports.map((report) => report.reportedBy ?? null))}::text[],
                    ${textArray(reports.map((report) => report.details ?? null))}::jsonb[]) AS r
       WHERE (SELECT n.reconcilers FROM named n) = ${cardinality(reconcilers)}
         AND (SELECT n.endpoints FROM named n) = ${cardinality(endpoints)}
      RETURNING 1
    )
    SELECT (SELECT count(*)::int FROM inserted) AS inserted, n.reconcilers, n.endpoints FROM named n`.execute(db);
  const { inserted, reconcilers: foundReconcilers, endpoints: foundEndpoints } = result.rows[0]!;
  if (inserted === reports.length) return;
  throw new MissingReferenceError(
    `cached ids name no row: ${cardinality(reconcilers) - foundReconcilers} reconcilers, ${cardinality(endpoints) - foundEndpoints} endpoints`,
  );
}

/** How many ids an idArray literal holds. */
function cardinality(literal: string): number {
  return literal === '{}' ? 0 : literal.split(',').length;
}
