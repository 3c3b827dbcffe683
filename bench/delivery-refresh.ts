// Delivery analytics under ingest: a new version is assigned to every target of one environment,
// and that environment's reconcilers report it (in progress, then success: every record a state
// transition on an endpoint with a deployment target), so every write queues rollout refreshes.
// Measures ingest with the refreshes running, how long an acknowledged write waits until the views
// show it (bench/queue-lag.ts: the hub's timers alone, no report asks meanwhile — what Grafana sees),
// during the burst and after its last acknowledgement, the refresh times the hub reports in /metrics,
// and whether every new rollout came out converged.
import { sql } from 'kysely';
import { createLogger } from '../src/log/logger.ts';
import { connectDatabase } from '../src/store/connect.ts';
import { queueRolloutRefresh } from '../src/store/rollout-refresh.ts';
import { stateLog } from '../test/support/kalypso-logs.ts';
import { buildLogRecords } from '../test/support/otlp-client.ts';
import type { BenchHub } from './bench-hub.ts';
import { progress } from './bench-report.ts';
import { versionCommit } from './fleet.ts';
import { benchIngestRawGrpc } from './ingest-raw-grpc.ts';
import { type QueueLag, sampleQueues } from './queue-lag.ts';

export interface DeliveryRefreshResult {
  readonly environment: string;
  readonly rollouts: number;
  readonly records: number;
  readonly recordsPerSecond: number;
  /** From the last acknowledgement until the rollout refresh queue was empty. */
  readonly currentAfterMs: number;
  /** From the last acknowledgement until the report summaries' queue was empty (schema/0012). */
  readonly summariesCurrentAfterMs: number;
  /** From the first record sent until both queues were empty: how long a write waited to be folded in. */
  readonly lag: QueueLag;
  /** The summary refreshes' time (hub /metrics) per record ingested, in microseconds. */
  readonly summaryMicrosPerRecord: number;
  readonly summaryRefreshes: number;
  readonly summaryRefreshMeanMs: number;
  /** The rollout refreshes (hub /metrics). */
  readonly refreshes: number;
  readonly refreshMeanMs: number;
  readonly rolloutsChanged: number;
  readonly converged: number;
}

export async function benchDeliveryRefresh(url: string, hub: BenchHub, environment: string, version: number): Promise<DeliveryRefreshResult> {
  const database = connectDatabase({ url, poolSize: 2, connectTimeoutMs: 5_000, applicationName: 'bench' }, createLogger('silent'));
  try {
    const db = database.db;
    const assignedAt = new Date();
    const commit = versionCommit(version);
    // What descriptors for every target of the environment would write (as the fleet generator does).
    // One transaction, so that no refresh sees the assignments before they are adopted.
    const rollouts = await db.transaction().execute(async (trx) => {
      const assigned = await sql<{ n: number }>`
        WITH added AS (
          INSERT INTO workload_version (workload_id, version, build, build_time)
          SELECT w.id, '1.' || ${version} || '.0', 'build-' || ${version}, ${assignedAt}::timestamptz - interval '30 minutes'
            FROM workload w
          ON CONFLICT (workload_id, version, build) DO UPDATE SET build_time = excluded.build_time
          RETURNING id, workload_id
        ), assignment AS (
          INSERT INTO deployment_assignment (deployment_target_id, workload_version_id, gitops_commit_id, assigned_at)
          SELECT t.id, added.id, ${commit}, ${assignedAt}
            FROM deployment_target t
            JOIN environment e ON e.id = t.environment_id AND e.name = ${environment}
            JOIN added ON added.workload_id = t.workload_id
          RETURNING id, deployment_target_id
        ), moved AS (
          UPDATE deployment_target t SET current_assignment_id = assignment.id FROM assignment WHERE t.id = assignment.deployment_target_id
          RETURNING t.manifests_endpoint_id
        ), queued AS (
          ${queueRolloutRefresh(sql`SELECT manifests_endpoint_id, ${assignedAt}::timestamptz - interval '1 hour', 'infinity'::timestamptz FROM moved`)}
        )
        SELECT count(*)::int AS n FROM moved`.execute(trx);
      // Written in bulk, not through the writer: rollouts, commit order and versions as the writer keeps them.
      await sql`SELECT kalypso_adopt_assignments(array_agg(t.id)) FROM deployment_target t
                 JOIN environment e ON e.id = t.environment_id AND e.name = ${environment}`.execute(trx);
      return assigned.rows[0]!.n;
    });

    const reconcilers = await sql<{ host: string; reconciler: string; endpoint: string }>`
      SELECT h.name AS host, r.name AS reconciler, me.endpoint
        FROM reconciler r
        JOIN host h ON h.id = r.host_id
        JOIN manifests_endpoint me ON me.id = r.manifests_endpoint_id
        JOIN deployment_target t ON t.manifests_endpoint_id = me.id
        JOIN environment e ON e.id = t.environment_id AND e.name = ${environment}
       ORDER BY h.name, r.name`.execute(db);
    progress(`delivery refresh: ${rollouts} new rollouts in ${environment}, ${reconcilers.rows.length} reconcilers report them`);
    const specs = ['in_progress', 'success'].flatMap((status, round) =>
      reconcilers.rows.map((row, i) =>
        stateLog({ host: row.host, reconciler: row.reconciler, endpoint: row.endpoint, commit, status, at: new Date(assignedAt.getTime() + (round + 1) * 60_000 + i) }),
      ),
    );
    const records = await buildLogRecords(specs);
    const before = await refreshMetrics(hub);
    // The assignment's own fold is part of it: the sampler starts before the records are sent.
    const queues = sampleQueues(db);
    const sent = performance.now();
    const ingest = await benchIngestRawGrpc([hub], records, { batchSize: 1_000, clients: 4, name: 'delivery refresh', foldQueued: false });
    const acknowledged = performance.now();
    const drained = await queues.drained(acknowledged);
    const lag = await queues.stop(sent);
    progress(`delivery refresh: views current ${Math.round(drained.summaries - acknowledged)} ms (summaries), ${Math.round(drained.rollouts - acknowledged)} ms (rollouts) after the last acknowledgement`);
    // The refresh that emptied the queue may still be committing its results.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const after = await refreshMetrics(hub);
    const converged = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM rollout WHERE gitops_commit_id = ${commit} AND converged_at IS NOT NULL`.execute(db);
    const refreshes = after.count - before.count;
    return {
      environment,
      rollouts,
      records: records.length,
      recordsPerSecond: ingest.recordsPerSecond,
      currentAfterMs: Math.round(drained.rollouts - acknowledged),
      summariesCurrentAfterMs: Math.round(drained.summaries - acknowledged),
      lag,
      summaryMicrosPerRecord: Math.round(((after.summarySum - before.summarySum) * 1e6) / records.length),
      summaryRefreshes: after.summaryCount - before.summaryCount,
      summaryRefreshMeanMs: meanMs(after.summarySum - before.summarySum, after.summaryCount - before.summaryCount),
      refreshes,
      refreshMeanMs: meanMs(after.sum - before.sum, refreshes),
      rolloutsChanged: after.changed - before.changed,
      converged: converged.rows[0]!.n,
    };
  } finally {
    await database.close();
  }
}

/** The mean of `count` runs that took `seconds` in all, in ms to a tenth; 0 without runs. */
function meanMs(seconds: number, count: number): number {
  return count > 0 ? Math.round((seconds / count) * 10_000) / 10 : 0;
}

async function refreshMetrics(hub: BenchHub): Promise<{ count: number; sum: number; changed: number; summarySum: number; summaryCount: number }> {
  const text = await (await fetch(`${hub.baseUrl}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} ([\\d.e+-]+)$`, 'm').exec(text)?.[1] ?? 0);
  return {
    count: value('kalypso_rollout_refresh_seconds_count'),
    sum: value('kalypso_rollout_refresh_seconds_sum'),
    changed: value('kalypso_rollouts_refreshed_total'),
    summarySum: value('kalypso_summary_refresh_seconds_sum'),
    summaryCount: value('kalypso_summary_refresh_seconds_count'),
  };
}
