// Store work a hub repeats on a timer (history partitions, rollout and summary refresh): never two
// runs at once, the timer does not keep the process alive, and stop() waits for a run under way so
// that the database is not closed beneath it.
import type { Logger } from '../log/logger.ts';
import { isDatabaseUnavailable } from './store-errors.ts';

export interface RepeatOptions {
  /** Runs at once, not after the first interval. */
  readonly immediately?: boolean;
  /**
   * A run that took d ms is followed by a rest of at least restRatio × d, so that work whose cost
   * grows under load takes at most 1 / (1 + restRatio) of the time of the connection it runs on.
   * With `yieldTo`, the rest is a concession to what it yields to, and only kept while that is busy.
   */
  readonly restRatio?: number;
  /** Work that gives way to something more urgent, for a while (see YieldTo). */
  readonly yieldTo?: YieldTo;
}

/**
 * A run that falls due while `busy()` says so waits, checking again every `recheckMs`, until it is
 * not busy or `maxMs` have passed since the run fell due and its rest ended — then it runs
 * regardless. A run that falls due while not busy runs then, its rest given up: resting while
 * nothing competes only leaves what it would fold in waiting (a refresh that took 14 s at fleet L
 * kept the views 140 s behind once the writes had ended).
 */
export interface YieldTo {
  busy(): boolean;
  readonly maxMs: number;
  readonly recheckMs: number;
}

/**
 * Runs `run` every `intervalMs` — from the start of one run to the start of the next, or later by
 * the rest the run earned. `run` handles its own failures.
 */
export function repeatEvery(intervalMs: number, run: () => Promise<void>, options: RepeatOptions = {}): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  /** When the next run falls due: an interval after the last one began. */
  let due = 0;
  /** When the last run's rest ends. */
  let restUntil = 0;
  const later = (delayMs: number): void => {
    if (stopped) return;
    timer = setTimeout(tick, delayMs);
    timer.unref();
  };
  const tick = (): void => {
    const { yieldTo } = options;
    const now = performance.now();
    if (yieldTo === undefined) {
      if (now < restUntil) {
        later(restUntil - now);
        return;
      }
    } else if (yieldTo.busy() && now - Math.max(due, restUntil) < yieldTo.maxMs) {
      later(yieldTo.recheckMs);
      return;
    }
    const started = performance.now();
    running = run().finally(() => {
      running = undefined;
      const ended = performance.now();
      const took = ended - started;
      restUntil = ended + (options.restRatio ?? 0) * took;
      const delayMs = Math.max(intervalMs - took, 0);
      due = ended + delayMs;
      later(delayMs);
    });
  };
  if (options.immediately === true) {
    due = performance.now();
    tick();
  } else {
    due = performance.now() + intervalMs;
    later(intervalMs);
  }
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/**
 * The rest of the background refreshes (summaries, rollouts): ten times as long as the refresh
 * took. They are serialized and every report folds them in before it answers, so a longer rest only
 * batches more per refresh — and a refresh costs more by how often it runs than by what it folds in:
 * a reconciler that changed five times between two refreshes is folded in once, and each refresh
 * judges again every host and rollout its changes reach. Under a burst of reports (bench
 * ingest-core, 1,000 × 4) the summary refresh took 5.1 s of database time at 10×, 7.6 s at 3×, and
 * 1.4 s when it ran only before reports; a quiet fleet's refreshes take milliseconds and still run
 * every interval. Only the SQL views (Grafana) read the summaries between refreshes: while the hub
 * keeps writing, behind by at most ten times the last refresh plus the time a refresh gives way to
 * writes (STATE_TUNING.refreshYield); once the writes pause, the rest is given up (YieldTo) and the
 * next refresh runs within the interval.
 */
export const REFRESH_REST_RATIO = 10;

/**
 * repeatEvery for work on the database, and its failures: while the database is down every run
 * fails the same way — said once a minute, without a stack trace (it is not a bug), and said when it
 * works again; any other failure is logged and retried on the next run.
 */
export function repeatThroughOutages(
  intervalMs: number,
  what: string,
  run: () => Promise<void>,
  log: Pick<Logger, 'info' | 'warn'>,
  options: RepeatOptions = {},
): { stop(): Promise<void> } {
  let unavailableSince: number | undefined;
  let lastSaid = 0;
  return repeatEvery(intervalMs, async () => {
    try {
      await run();
      if (unavailableSince !== undefined) {
        log.info({ downMs: Date.now() - unavailableSince }, `${what} works again`);
        unavailableSince = undefined;
      }
    } catch (error) {
      if (!isDatabaseUnavailable(error)) {
        log.warn({ err: error }, `${what} failed; will retry`);
        return;
      }
      unavailableSince ??= Date.now();
      if (Date.now() - lastSaid >= 60_000) {
        lastSaid = Date.now();
        log.warn({ err: (error as Error).message }, `${what} waits for the database`);
      }
    }
  }, options);
}
