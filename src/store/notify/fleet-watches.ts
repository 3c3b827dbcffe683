// Drift and hosts as the events see them: what changed since the notifier last looked (schema/0024
// notify_drift, notify_host_offline). The first look of a database takes the fleet as it is, so
// that a hub starting on a large fleet does not announce every drift and offline host it finds.
import { type Kysely, sql } from 'kysely';
import type { HubDatabase } from '../database-schema.ts';

export interface DriftChange {
  readonly change: 'started' | 'resolved';
  readonly reconcilerId: number;
  readonly targetId: number;
  readonly host: string;
  readonly reconciler: string;
  readonly environment: string | null;
  readonly deploymentTarget: string | null;
  readonly workload: string | null;
  readonly since: Date;
  /** Why it drifts (started) — none when resolved. */
  readonly reasons: readonly string[];
}

export interface HostChange {
  readonly change: 'offline' | 'online';
  readonly hostId: number;
  readonly host: string;
  readonly lastSeenAt: Date;
}

/** The first look of a watch: everything as it is, nothing to announce. Returns false when that was done before. */
async function takeBaseline(db: Kysely<HubDatabase>, watch: string): Promise<boolean> {
  const inserted = await sql`INSERT INTO notify_baseline (watch) VALUES (${watch}) ON CONFLICT DO NOTHING`.execute(db);
  return Number(inserted.numAffectedRows ?? 0) === 1;
}

/** Drift (kalypso_judge_drift, kept current in drift_item) that started — and has lasted `minAgeMs` — or resolved. */
export async function driftChanges(db: Kysely<HubDatabase>, now: Date, minAgeMs: number): Promise<DriftChange[]> {
  const cutoff = new Date(now.getTime() - minAgeMs);
  if (await takeBaseline(db, 'drift')) {
    // All that stands, however recent: it was there before anyone was told anything.
    await sql`
      INSERT INTO notify_drift (reconciler_id, deployment_target_id, drifting_since)
      SELECT reconciler_id, deployment_target_id, drifting_since FROM drift_item
      ON CONFLICT DO NOTHING`.execute(db);
    return [];
  }
  const rows = await sql<{
    change: 'started' | 'resolved';
    reconciler_id: number;
    target_id: number;
    host: string;
    reconciler: string;
    environment: string | null;
    target: string | null;
    workload: string | null;
    since: Date;
    reasons: string[];
  }>`
    WITH started AS (
      INSERT INTO notify_drift (reconciler_id, deployment_target_id, drifting_since)
      SELECT d.reconciler_id, d.deployment_target_id, d.drifting_since FROM drift_item d
       WHERE d.drifting_since <= ${cutoff}::timestamptz
         AND NOT EXISTS (SELECT 1 FROM notify_drift n WHERE n.reconciler_id = d.reconciler_id AND n.deployment_target_id = d.deployment_target_id)
      RETURNING reconciler_id, deployment_target_id, drifting_since
    ), resolved AS (
      DELETE FROM notify_drift n
       WHERE NOT EXISTS (SELECT 1 FROM drift_item d WHERE d.reconciler_id = n.reconciler_id AND d.deployment_target_id = n.deployment_target_id)
      RETURNING reconciler_id, deployment_target_id, drifting_since
    ), changes AS (
      SELECT 'started' AS change, * FROM started UNION ALL SELECT 'resolved', * FROM resolved
    )
    SELECT c.change, c.reconciler_id, c.deployment_target_id AS target_id, h.name AS host, r.name AS reconciler,
           t.environment, t.name AS target, t.workload, c.drifting_since AS since,
           CASE WHEN c.change = 'resolved' THEN '{}'::text[] ELSE array_remove(ARRAY[
             CASE WHEN d.not_on_desired_rollout THEN 'not_on_desired_commit' END,
             CASE WHEN d.failing THEN 'failing' END, CASE WHEN d.stale THEN 'stale' END], NULL) END AS reasons
      FROM changes c
      JOIN reconciler r ON r.id = c.reconciler_id
      JOIN host h ON h.id = r.host_id
      LEFT JOIN deployment_target_named t ON t.id = c.deployment_target_id
      LEFT JOIN drift_item d ON d.reconciler_id = c.reconciler_id AND d.deployment_target_id = c.deployment_target_id
     ORDER BY c.change DESC, h.name, r.name`.execute(db);
  return rows.rows.map((row) => ({
    change: row.change,
    reconcilerId: Number(row.reconciler_id),
    targetId: Number(row.target_id),
    host: row.host,
    reconciler: row.reconciler,
    environment: row.environment,
    deploymentTarget: row.target,
    workload: row.workload,
    since: row.since,
    reasons: row.reasons,
  }));
}

/** Hosts that went silent longer than stale-after (offline), or were heard from again (online). */
export async function hostChanges(db: Kysely<HubDatabase>, now: Date): Promise<HostChange[]> {
  const staleBefore = sql`${now}::timestamptz - (SELECT stale_after FROM hub_settings)`;
  if (await takeBaseline(db, 'hosts')) {
    await sql`
      INSERT INTO notify_host_offline (host_id, last_seen_at)
      SELECT id, last_seen_at FROM host WHERE last_seen_at < ${staleBefore} ON CONFLICT DO NOTHING`.execute(db);
    return [];
  }
  const rows = await sql<{ change: 'offline' | 'online'; host_id: number; host: string; last_seen_at: Date }>`
    WITH gone AS (
      INSERT INTO notify_host_offline (host_id, last_seen_at)
      SELECT h.id, h.last_seen_at FROM host h
       WHERE h.last_seen_at < ${staleBefore} AND NOT EXISTS (SELECT 1 FROM notify_host_offline o WHERE o.host_id = h.id)
      RETURNING host_id
    ), back AS (
      DELETE FROM notify_host_offline o USING host h
       WHERE h.id = o.host_id AND h.last_seen_at >= ${staleBefore}
      RETURNING o.host_id
    )
    SELECT 'offline' AS change, h.id AS host_id, h.name AS host, h.last_seen_at FROM gone JOIN host h ON h.id = gone.host_id
    UNION ALL
    SELECT 'online', h.id, h.name, h.last_seen_at FROM back JOIN host h ON h.id = back.host_id
    ORDER BY 1, 3`.execute(db);
  return rows.rows.map((row) => ({ change: row.change, hostId: Number(row.host_id), host: row.host, lastSeenAt: row.last_seen_at }));
}
