// The store's one error type for callers: "the database cannot take this now, retry later".
// Receivers turn it into gRPC UNAVAILABLE / HTTP 503 so collectors keep the data and retry.

export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  /** Suggested wait before a retry, in seconds. */
  readonly retryAfterSeconds: number;
  /**
   * true: the database cannot take anything now (down, not migrated yet, overloaded), whatever is
   * sent; false: it refused this write (a defect), and another write may well succeed.
   */
  readonly outage: boolean;

  constructor(message: string, retryAfterSeconds: number, options?: ErrorOptions & { readonly outage?: boolean }) {
    super(message, options);
    this.retryAfterSeconds = retryAfterSeconds;
    this.outage = options?.outage ?? true;
  }
}

/** Deadlocks and serialization failures: the transaction may simply be run again. */
export function isTransientConflict(error: unknown): boolean {
  const code = sqlState(error);
  return code === '40P01' || code === '40001';
}

/**
 * A foreign key pointing at a row that is not there: for the hub's writes, a cached dimension id
 * whose row vanished (the database was restored from a backup, or failed over to a replica that
 * had not received the row's commit). Looking the ids up again repairs it.
 */
export function isMissingReference(error: unknown): boolean {
  return error instanceof MissingReferenceError || sqlState(error) === '23503';
}

/** The same, found by the writer's own check of a batch's ids (where no foreign key checks them). */
export class MissingReferenceError extends Error {
  override readonly name = 'MissingReferenceError';
}

/**
 * A history row that was already stored, met by an insert that trusted it could not be (see
 * write-real-state.ts, `newerThanHistory`): the write is run again checking every row.
 */
export function isRepeatedHistoryRow(error: unknown): boolean {
  return sqlState(error) === '23505' && (error as { constraint?: unknown }).constraint?.toString().startsWith('deployment_state_history') === true;
}

/**
 * Whether an error means the database is unreachable or refusing work (as opposed to a bug in
 * the hub): connection errors, server shutdown, too many connections, out of disk, timeouts.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = sqlState(error);
  if (code !== undefined) {
    // 08: connection exception; 53: insufficient resources; 57P0x: shutdown/crash;
    // 57014: statement timeout / cancel; 55P03: lock not available.
    return /^(08|53|57P0)/.test(code) || code === '57014' || code === '55P03';
  }
  const message = error instanceof Error ? error.message : String(error);
  const nodeCode = (error as { code?: unknown } | null)?.code;
  return (
    (typeof nodeCode === 'string' && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH)$/.test(nodeCode)) ||
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed|Cannot use a pool after calling end/i.test(
      message,
    )
  );
}

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}
