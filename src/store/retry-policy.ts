// The hub's one retry policy, for the database being out of reach (down, restarting, not yet
// migrated): what clients are told (Retry-After on HTTP, RetryInfo on gRPC) and how the hub's own
// attempts are spaced (migrations, the embedded server's restarts). One place, so that the hub
// never asks clients to come back sooner than it tries again itself.

/** Seconds a client is asked to wait before it sends again. */
export const RETRY_LATER_SECONDS = 5;

/** A write failed for a reason other than reach: retrying soon is unlikely to help, so clients wait this many times longer. */
export const FAILED_WRITE_WAIT_FACTOR = 4;

/** The waits between the hub's own attempts: doubling from `firstMs`, never above RETRY_LATER_SECONDS. */
export function* backoffDelaysMs(firstMs: number): Generator<number, never> {
  for (let delay = firstMs; ; delay = Math.min(delay * 2, RETRY_LATER_SECONDS * 1_000)) yield delay;
}
