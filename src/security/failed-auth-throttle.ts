// Failed authentications slowed per client: after a few, each refusal from the same address waits
// longer before it is answered (doubling, up to a cap), so guessing tokens costs time while a
// client that mistyped once is not held up. Kept in memory per hub, forgotten after a quiet window.

export const FAILED_AUTH_TUNING = {
  /** Failures within the window before answers are slowed. */
  freeFailures: 3,
  /** The first slowed answer waits this long; each further failure doubles it. */
  firstDelayMs: 200,
  maxDelayMs: 5_000,
  /** A client without failures for this long starts afresh. */
  windowMs: 60_000,
  /** Clients remembered at most (the oldest forgotten first): a flood of addresses costs no memory. */
  maxClients: 10_000,
} as const;
export type FailedAuthTuning = { readonly [K in keyof typeof FAILED_AUTH_TUNING]: number };

export class FailedAuthThrottle {
  readonly #tuning: FailedAuthTuning;
  readonly #clients = new Map<string, { failures: number; lastAt: number }>();
  readonly #now: () => number;

  constructor(tuning: Partial<FailedAuthTuning> = {}, now: () => number = Date.now) {
    this.#tuning = { ...FAILED_AUTH_TUNING, ...tuning };
    this.#now = now;
  }

  /** Records a failure of the client; resolves when its answer may go out. Returns the delay (ms). */
  async failed(client: string): Promise<number> {
    const delay = this.#record(client);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay).unref());
    return delay;
  }

  #record(client: string): number {
    const now = this.#now();
    const known = this.#clients.get(client);
    const failures = known !== undefined && now - known.lastAt < this.#tuning.windowMs ? known.failures + 1 : 1;
    // Re-inserted, so that the map's order is the order of last failure (oldest first).
    this.#clients.delete(client);
    this.#clients.set(client, { failures, lastAt: now });
    if (this.#clients.size > this.#tuning.maxClients) this.#clients.delete(this.#clients.keys().next().value!);
    const slowed = failures - this.#tuning.freeFailures;
    return slowed <= 0 ? 0 : Math.min(this.#tuning.maxDelayMs, this.#tuning.firstDelayMs * 2 ** (slowed - 1));
  }
}
