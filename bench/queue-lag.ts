// How long an acknowledged write waits until the views that read summaries and rollouts show it —
// what Grafana sees, which reads them directly (the API folds the queues in before it answers).
// Writers queue what they changed in the statement that changes it, and a refresh deletes the rows
// it folded in when it commits; so a write is in the views once no queue row as old as it is left.
// The sampler asks every `everyMs`: the newest summary_queue id (ids grow with each insert), and the
// age of the oldest rollout_refresh_queue row (it has no id; its queued_at is the writing
// transaction's start, read against the database's own clock).
import { type Kysely, sql } from 'kysely';
import type { HubDatabase } from '../src/store/database-schema.ts';
import { percentile } from './bench-report.ts';

interface QueueSample {
  /** performance.now() when the answer came back. */
  readonly at: number;
  readonly summaryMin: number | null;
  readonly summaryMax: number | null;
  /** How long the oldest queued rollout refresh has waited, ms; 0 when none. */
  readonly rolloutAgeMs: number;
}

export interface QueueLag {
  /** Each sample taken from `from` on: how long until the summaries held every write queued by then. */
  readonly summaryLagMs: { readonly p50: number; readonly p95: number; readonly max: number };
  /** Each sample taken from `from` on: how long the oldest queued rollout refresh had waited. */
  readonly rolloutLagMs: { readonly p50: number; readonly p95: number; readonly max: number };
}

export interface QueueSampler {
  /** Samples until both queues were seen empty at or after `after` (performance.now()); when. */
  drained(after: number): Promise<{ summaries: number; rollouts: number }>;
  /** Stops sampling; the lag of the writes from `from` (performance.now()) on. */
  stop(from: number): Promise<QueueLag>;
}

export function sampleQueues(db: Kysely<HubDatabase>, everyMs = 50): QueueSampler {
  const samples: QueueSample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const row = await sql<{ summary_min: string | null; summary_max: string | null; rollout_age_ms: number | null }>`
        SELECT (SELECT min(id) FROM summary_queue) AS summary_min, (SELECT max(id) FROM summary_queue) AS summary_max,
               (extract(epoch FROM clock_timestamp() - (SELECT min(queued_at) FROM rollout_refresh_queue)) * 1000)::float8 AS rollout_age_ms`.execute(db);
      const r = row.rows[0]!;
      samples.push({
        at: performance.now(),
        summaryMin: r.summary_min === null ? null : Number(r.summary_min),
        summaryMax: r.summary_max === null ? null : Number(r.summary_max),
        rolloutAgeMs: r.rollout_age_ms ?? 0,
      });
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async drained(after) {
      const firstEmpty = (empty: (sample: QueueSample) => boolean) => samples.find((s) => s.at >= after && empty(s))?.at;
      for (;;) {
        const summaries = firstEmpty((s) => s.summaryMax === null);
        const rollouts = firstEmpty((s) => s.rolloutAgeMs === 0);
        if (summaries !== undefined && rollouts !== undefined) return { summaries, rollouts };
        await new Promise((resolve) => setTimeout(resolve, everyMs));
      }
    },
    async stop(from) {
      running = false;
      await loop;
      const taken = samples.filter((s) => s.at >= from);
      const summaryLags = taken.flatMap((sample, i) => {
        if (sample.summaryMax === null) return [0];
        // Folded once a later sample's oldest row is newer than this one's newest (or none is left).
        const folded = taken.slice(i + 1).find((s) => s.summaryMin === null || s.summaryMin > sample.summaryMax!);
        return folded === undefined ? [] : [folded.at - sample.at];
      });
      return { summaryLagMs: spread(summaryLags), rolloutLagMs: spread(taken.map((s) => s.rolloutAgeMs)) };
    },
  };
}

function spread(values: readonly number[]): { p50: number; p95: number; max: number } {
  return { p50: Math.round(percentile(values, 50)), p95: Math.round(percentile(values, 95)), max: Math.round(percentile(values, 100)) };
}
