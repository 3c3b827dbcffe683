// Store work a hub repeats on a timer (history partitions, rollout refresh): never two runs at
// once, the timer does not keep the process alive, and stop() waits for a run under way so that
// the database is not closed beneath it.

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
