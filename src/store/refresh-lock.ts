// The refreshers of derived tables (rollouts, report summaries) run on every replica and before
// reports read; an advisory lock serializes them so that a refresh that started earlier can never
// overwrite a later one's result.
import { type Kysely, sql, type Transaction } from 'kysely';
import type { HubDatabase } from './database-schema.ts';

/** How long a timer's refresh waits for a table another transaction holds locked before it skips the tick. */
const TICK_LOCK_TIMEOUT = '500ms';

/**
 * Runs `body` in a transaction holding the advisory lock named `name`. `wait: false` (a timer's
 * tick) gives up at once (undefined) when another refresh holds it — that refresh, or the next
 * tick, does the work — and also when a table it needs stays locked by another transaction: a
 * tick never queues behind a long write (nor holds up a shutdown). The lock is taken in a
 * statement of its own, so that `body`'s statements see everything committed before it was granted.
 */
export async function underRefreshLock<T>(
  db: Kysely<HubDatabase>,
  name: string,
  wait: boolean,
  body: (trx: Transaction<HubDatabase>) => Promise<T>,
): Promise<T | undefined> {
  try {
    return await db.transaction().execute(async (trx) => {
      if (wait) {
        await sql`SELECT pg_advisory_xact_lock(hashtext(${name}))`.execute(trx);
      } else {
        const locked = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(hashtext(${name})) AS locked`.execute(trx);
        if (!locked.rows[0]!.locked) return undefined;
        await sql`SET LOCAL lock_timeout = ${sql.lit(TICK_LOCK_TIMEOUT)}`.execute(trx);
      }
      return await body(trx);
    });
  } catch (error) {
    // 55P03: lock_not_available — the tick's lock_timeout; the next tick tries again.
    if (!wait && (error as { code?: unknown }).code === '55P03') return undefined;
    throw error;
  }
}
