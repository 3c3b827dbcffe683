// Bounded admission to the store: at most `maxActive` batches write at once and at most
// `maxWaiting` wait for a turn. Past that the hub is overloaded and says so at once (clients
// retry later) instead of queueing without bound and running out of memory.
export class Admission {
  readonly #maxActive: number;
  readonly #maxWaiting: number;
  #active = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(maxActive: number, maxWaiting: number) {
    this.#maxActive = maxActive;
    this.#maxWaiting = maxWaiting;
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /** Runs `work` when a slot is free; `overloaded` when too many are already waiting. */
  async run<T>(work: () => Promise<T>): Promise<{ admitted: true; value: T } | { admitted: false }> {
    if (this.#active >= this.#maxActive) {
      if (this.#waiting.length >= this.#maxWaiting) return { admitted: false };
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#active += 1;
    }
    try {
      return { admitted: true, value: await work() };
    } finally {
      const next = this.#waiting.shift();
      // The slot passes straight to the next waiter; only when none waits is it freed.
      if (next !== undefined) next();
      else this.#active -= 1;
    }
  }
}
