// What a starting hub has set up, undone in reverse order when it stops. A stop first waits for the
// work still starting (sources waiting for the database stop waiting when the hub's signal aborts,
// and register their own undo steps), and every undo step shares one deadline: --shutdown-timeout,
// however many steps wait.
import type { Logger } from './log/logger.ts';

export class StartedSteps {
  readonly #undo: (() => Promise<void>)[] = [];
  #starting: Promise<unknown> = Promise.resolve();
  #deadline = Infinity;

  /** When the stop under way must be over; Infinity until a stop begins. */
  get deadline(): number {
    return this.#deadline;
  }

  /** How to undo a step that has started. */
  add(undo: () => Promise<void> | void): void {
    this.#undo.push(async () => {
      await undo();
    });
  }

  /** Work still starting: a stop waits for it before it undoes anything. */
  startingUntil(work: Promise<unknown>): void {
    this.#starting = work;
  }

  /** Undoes every step, the last started first; a step that fails is logged and the rest go on. */
  async undoAll(timeoutMs: number, log: Logger): Promise<void> {
    this.#deadline = Date.now() + timeoutMs;
    await this.#starting.catch(() => undefined);
    for (const step of this.#undo.reverse().splice(0)) {
      await step().catch((error: unknown) => log.error({ err: error }, 'error during shutdown'));
    }
  }
}
