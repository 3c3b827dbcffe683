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
   */
  readonly restRatio?: number;
  /** Work that gives way to something more urgent, for a while (see YieldTo). */
  readonly yieldTo?: YieldTo;
  /**
   * A run that says more is left (returns true: it did a bounded part of what is queued) is
   * followed by the next after a rest of this × its duration, not after the interval.
   */
  readonly moreRestRatio?: number;
}

/**
 * A run that falls due while `busy()` says so waits, checking again every `recheckMs`, until it is
 * not busy or `maxMs` have passed since the run fell due — then it runs regardless.
 */
export interface YieldTo {
  busy(): boolean;
  readonly maxMs: number;
  readonly recheckMs: number;
}

/**
 * Runs `run` every `intervalMs` — from the start of one run to the start of the next, or later by
 * the rest the run earned; sooner when it says more is left (see moreRestRatio). `run` handles its
 * own failures.
 */
export function repeatEvery(intervalMs: number, run: () => Promise<boolean | void>, options: RepeatOptions = {}): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  /** When the next run falls due. */
  let due = 0;
  const later = (delayMs: number): void => {
    if (stopped) return;
    timer = setTimeout(tick, delayMs);
    timer.unref();
  };
  const schedule = (delayMs: number): void => {
    due = performance.now() + delayMs;
    later(delayMs);
  };
  const tick = (): void => {
    const { yieldTo } = options;
    if (yieldTo !== undefined && performance.now() - due < yieldTo.maxMs && yieldTo.busy()) {
      later(yieldTo.recheckMs);
      return;
    }
    const started = performance.now();
    let more = false;
    running = run()
      .then((said) => {
        more = said === true;
      })
      .finally(() => {
        running = undefined;
        const took = performance.now() - started;
        const { moreRestRatio } = options;
        schedule(more && moreRestRatio !== undefined ? moreRestRatio * took : Math.max(intervalMs - took, (options.restRatio ?? 0) * took));
      });
  };
  if (options.immediately === true) {
    due = performance.now();
    tick();
  } else {
    schedule(intervalMs);
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
 * The rest of the rollout refresh (the summary refresh's until it folded in slices,
 * STATE_TUNING.summaryRefresh): ten times as long as the refresh took. They are serialized and every report folds them in before it answers, so a longer rest only
 * batches more per refresh — and a refresh costs more by how often it runs than by what it folds in:
 * a reconciler that changed five times between two refreshes is folded in once, and each refresh
 * judges again every host and rollout its changes reach. Under a burst of reports (bench
 * ingest-core, 1,000 × 4) the summary refresh took 5.1 s of database time at 10×, 7.6 s at 3×, and
 * 1.4 s when it ran only before reports; a quiet fleet's refreshes take milliseconds and still run
 * every interval. Only the SQL views (Grafana) read the summaries between refreshes: behind by at
 * most ten times the last refresh under a burst, plus the time a refresh gives way to writes
 * (hub.ts, REFRESH_YIELD).
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
  run: () => Promise<boolean | void>,
  log: Pick<Logger, 'info' | 'warn'>,
  options: RepeatOptions = {},
): { stop(): Promise<void> } {
  let unavailableSince: number | undefined;
  let lastSaid = 0;
  return repeatEvery(intervalMs, async () => {
    try {
      const more = await run();
      if (unavailableSince !== undefined) {
        log.info({ downMs: Date.now() - unavailableSince }, `${what} works again`);
        unavailableSince = undefined;
      }
      return more;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) {
        log.warn({ err: error }, `${what} failed; will retry`);
        return false;
      }
      unavailableSince ??= Date.now();
      if (Date.now() - lastSaid >= 60_000) {
        lastSaid = Date.now();
        log.warn({ err: (error as Error).message }, `${what} waits for the database`);
      }
    }
  }, options);
}
