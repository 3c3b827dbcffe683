// In-process signal "the state of endpoint E changed", raised by the writer after each commit, so
// that rollout-gate long-polls answer at once instead of on their next poll. Other hub replicas
// write too; waiters therefore also poll on a timer (see the rollout route).
import { EventEmitter } from 'node:events';

export class StateChanges {
  readonly #emitter = new EventEmitter();

  constructor() {
    // One listener per waiting request; there is no leak to warn about.
    this.#emitter.setMaxListeners(0);
  }

  notify(endpoints: Iterable<string>): void {
    for (const endpoint of new Set(endpoints)) this.#emitter.emit(endpoint);
  }

  /** Resolves when one of `endpoints` changes, after `timeoutMs`, or when `signal` aborts — whichever is first. */
  next(endpoints: readonly string[], timeoutMs: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        for (const endpoint of endpoints) this.#emitter.off(endpoint, done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, timeoutMs));
      for (const endpoint of endpoints) this.#emitter.once(endpoint, done);
      signal.addEventListener('abort', done, { once: true });
      if (signal.aborted) done();
    });
  }
}
