// One pg pool per hub, wrapped by Kysely. The pool is configured to fail fast when Postgres is
// unreachable, so receivers can answer "retry later" instead of holding requests open.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Logger } from '../log/logger.ts';
import type { HubDatabase } from './database-schema.ts';
import { DATABASE_TUNING } from './database-settings.ts';

export interface DatabaseOptions {
  readonly url: string;
  readonly poolSize: number;
  /** How long to wait for a connection before giving up (the database is then "unavailable"); default 5 s. */
  readonly connectTimeoutMs?: number;
  /** What pg_stat_activity shows (default kalypso-hub). */
  readonly applicationName?: string;
}

export interface Database {
  readonly db: Kysely<HubDatabase>;
  readonly pool: pg.Pool;
  close(): Promise<void>;
}

// int8 (ids, counts) as numbers: the hub's ids and counts stay far below 2^53.
const INT8_OID = 20;
const typeParsers = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
    oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
};

/**
 * Put first in a statement (sql template): the connection prepares it under a name, and PostgreSQL
 * keeps its plan for that connection. For small, hot statements whose planning costs more than
 * their run (the rollout gate's at fleet L: planned in 4–5 ms, run in 0.2–3 ms); after five runs
 * PostgreSQL keeps a generic plan only when it costs no more than the custom ones did.
 */
export const PREPARED_MARK = '/* prepared */';

/** Statements that begin with PREPARED_MARK go out as named prepared statements (a name per text). */
function keepPlansOfPrepared(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const named = new Map<string, string>();
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
    const [text, values] = args;
    // Anything else as it came, every argument kept: the pool's own query() passes a callback.
    if (typeof text !== 'string' || !text.startsWith(PREPARED_MARK) || args.length > 2 || typeof values === 'function') return query(...args);
    let name = named.get(text);
    if (name === undefined) {
      name = `kalypso_${named.size}`;
      named.set(text, name);
    }
    return query({ name, text, values });
  };
}

export function connectDatabase(options: DatabaseOptions, log: Logger): Database {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DATABASE_TUNING.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    application_name: options.applicationName ?? 'kalypso-hub',
    types: typeParsers,
  });
  // An idle client whose server went away emits 'error' on the pool; unhandled, it would crash
  // the process. The next query gets a fresh connection (or a clear "unavailable").
  pool.on('error', (error: Error & { code?: string }) => log.warn({ err: error.message, code: error.code }, 'database connection lost'));
  // A client checked out of the pool (a transaction, a migration) has no pool listener: when its
  // server dies, pg emits 'error' on the client itself, which would crash the process. Its query
  // fails anyway (so the caller answers "retry later") and the pool discards the client on
  // release, so the event only needs to be heard.
  pool.on('connect', (client) => {
    client.on('error', (error: Error & { code?: string }) => {
      log.debug({ err: error.message, code: error.code }, 'database connection lost while in use');
    });
    keepPlansOfPrepared(client);
  });
  const db = new Kysely<HubDatabase>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    pool,
    close: () => db.destroy(),
  };
}
