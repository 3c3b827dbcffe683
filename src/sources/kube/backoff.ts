// Exponential backoff with jitter, so that restarts after failures never spin and many hubs
// failing together do not retry in lockstep.
export class Backoff {
  readonly #baseMs: number;
  readonly #maxMs: number;
  #attempt = 0;

  constructor(baseMs: number, maxMs: number) {
    this.#baseMs = baseMs;
    this.#maxMs = maxMs;
  }

  /** The next delay: base·2^n, capped, with ±20 % jitter. */
  next(): number {
    const delay = Math.min(this.#maxMs, this.#baseMs * 2 ** this.#attempt);
    this.#attempt += 1;
    return Math.round(delay * (0.8 + Math.random() * 0.4));
  }

  reset(): void {
    this.#attempt = 0;
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
    if (signal?.aborted === true) done();
  });
}
