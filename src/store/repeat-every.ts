// Store work a hub repeats on a timer (history partitions, rollout and summary refresh): never two
// runs at once, the timer does not keep the process alive, and stop() waits for a run under way so
// that the database is not closed beneath it.
import type { Logger } from '../log/logger.ts';
import { isDatabaseUnavailable } from './store-errors.ts';

/** Runs `run` every `intervalMs` (and at once with `immediately`). `run` handles its own failures. */
export function repeatEvery(intervalMs: number, run: () => Promise<void>, options: { readonly immediately?: boolean } = {}): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const tick = (): void => {
    if (running !== undefined) return;
    running = run().finally(() => {
      running = undefined;
    });
  };
  if (options.immediately === true) tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

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
  });
}
