// Removes reconcilers from the current state (their history stays): a Reconciler resource was
// deleted, or a polled source no longer lists it. A report newer than the removal wins: it
// means the reconciler is back.
import { type Kysely, sql } from 'kysely';
import type { ReconcilerRemovedRecord } from '../model/deployment-records.ts';
import type { HubDatabase } from './database-schema.ts';

export async function writeRemovals(trx: Kysely<HubDatabase>, removals: readonly ReconcilerRemovedRecord[]): Promise<number> {
  if (removals.length === 0) return 0;
  const found = await sql<{ id: number; removed_at: Date }>`
    SELECT r.id, x.removed_at
      FROM unnest(${removals.map((removal) => removal.host)}::text[],
                  ${removals.map((removal) => removal.reconciler)}::text[],
                  ${removals.map((removal) => removal.removedAt)}::timestamptz[]) AS x(host, name, removed_at)
      JOIN host h ON h.name = x.host
      JOIN reconciler r ON r.host_id = h.id AND r.name = x.name
     ORDER BY r.id
       FOR NO KEY UPDATE OF r`.execute(trx);
  if (found.rows.length === 0) return 0;
  const ids = found.rows.map((row) => row.id);
  const times = found.rows.map((row) => row.removed_at);
  const removed = await sql`
    DELETE FROM deployment_state s
     USING unnest(${ids}::bigint[], ${times}::timestamptz[]) AS x(id, removed_at)
     WHERE s.reconciler_id = x.id AND s.last_observed_at <= x.removed_at`.execute(trx);
  // Removed subscribers leave the rollouts they had not applied yet (schema/0008), on every
  // endpoint they reported to (schema/0015).
  await sql`
    WITH removed AS (
      UPDATE reconciler r SET removed_at = x.removed_at
        FROM (SELECT x.*, was.removed_at AS was_removed_at
                FROM unnest(${ids}::bigint[], ${times}::timestamptz[]) AS x(id, removed_at)
                JOIN reconciler was ON was.id = x.id) x
       WHERE r.id = x.id AND NOT EXISTS (SELECT 1 FROM deployment_state s WHERE s.reconciler_id = r.id)
      -- From the earlier of the two removals: the rollouts between them count it differently now.
      RETURNING r.id, least(x.was_removed_at, x.removed_at) AS since
    )
    SELECT kalypso_queue_subscriber_rollouts(array_agg(id), array_agg(since)) FROM removed`.execute(trx);
  return Number(removed.numAffectedRows ?? 0n);
}
