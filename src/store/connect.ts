// One pg pool per hub, wrapped by Kysely. The pool is configured to fail fast when Postgres is
// unreachable, so receivers can answer "retry later" instead of holding requests open.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Logger } from '../log/logger.ts';
import type { HubDatabase } from './database-schema.ts';
import { DATABASE_TUNING } from './database-settings.ts';
import { KeepPlans, keepPlansOfPrepared } from './kept-plans.ts';

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
  /** The same pool for the reports: every statement written as SQL text is prepared, its plan kept per connection (kept-plans.ts). */
  readonly reports: Kysely<HubDatabase>;
  readonly pool: pg.Pool;
  close(): Promise<void>;
}

// int8 (ids, counts) as numbers: the hub's ids and counts stay far below 2^53.
const INT8_OID = 20;
const typeParsers = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
    oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
};

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
    reports: db.withPlugin(new KeepPlans()),
    pool,
    close: () => db.destroy(),
  };
}
