// What the hub can say about its database while it cannot use it: which one, and why. Users saw
// "the database schema is not migrated yet" when the database was simply unreachable; the answer
// must name the address and the cause ("cannot reach the database at db:5432: connect
// ECONNREFUSED 10.0.0.7:5432"), so that the person reading it knows where to look.
import { postgresAddress } from '../config/postgres-url.ts';

export class DatabaseStatus {
  /** host:port of the database, or its socket directory (never its credentials). */
  readonly address: string;
  #migrated = false;
  #unreachable: string | undefined;

  constructor(url: string) {
    // An unparsable URL fails at the first connection, with pg's own message.
    this.address = postgresAddress(url) ?? 'the configured address';
  }

  get migrated(): boolean {
    return this.#migrated;
  }

  markMigrated(): void {
    this.#migrated = true;
    this.#unreachable = undefined;
  }

  markUnreachable(error: unknown): void {
    this.#unreachable = reasonOf(error);
  }

  /** Why the API cannot answer yet. */
  notReadyMessage(): string {
    return this.#unreachable === undefined
      ? 'the database schema is being migrated; retry later'
      : `cannot reach the database at ${this.address}: ${this.#unreachable}; retry later`;
  }

  /** The answer for a request that failed because the database did not answer. */
  unreachableMessage(error: unknown): string {
    return `cannot reach the database at ${this.address}: ${reasonOf(error)}; retry later`;
  }
}

/** The innermost useful message: the store wraps pg's errors, and AggregateErrors hold one per address. */
function reasonOf(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5; depth += 1) {
    if (current instanceof AggregateError && current.errors.length > 0) current = current.errors[0];
    else if (current instanceof Error && (current.message === '' || current.name === 'StoreUnavailableError') && current.cause !== undefined) current = current.cause;
    else break;
  }
  if (current instanceof Error) return current.message || current.name;
  return String(current);
}
