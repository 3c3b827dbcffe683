// Where the hub keeps its data: an external PostgreSQL, or the embedded one it starts itself, and
// how many connections it holds. Also the numbers that shape the connection and the embedded
// server, in one place.
import { duration, port, positiveInteger, postgresUrl, text } from '../config/setting-parsers.ts';
import type { Setting } from '../config/setting.ts';

export const DATABASE_SETTINGS = {
  databaseUrl: {
    flag: 'database-url',
    group: 'database',
    env: ['KALYPSO_DATABASE_URL', 'DATABASE_URL'],
    default: undefined,
    description: 'PostgreSQL (14+) to use, as a postgres:// URL; through a Unix socket: postgres://user:secret@/db?host=/run/postgresql. Unset: start the embedded PostgreSQL.',
    parse: postgresUrl,
    shownDefault: '(embedded)',
    secret: true,
  } satisfies Setting<string | undefined>,
  dataDir: {
    flag: 'data-dir',
    group: 'database',
    env: ['KALYPSO_DATA_DIR'],
    default: './.kalypso-hub',
    description: 'Where the embedded PostgreSQL keeps its data (survives restarts).',
    parse: text,
  } satisfies Setting<string>,
  embeddedPgPort: {
    flag: 'embedded-pg-port',
    group: 'database',
    env: ['KALYPSO_EMBEDDED_PG_PORT'],
    default: 5433,
    description: 'Port of the embedded PostgreSQL, on 127.0.0.1.',
    parse: port,
  } satisfies Setting<number>,
  embeddedPgPassword: {
    flag: 'embedded-pg-password',
    group: 'database',
    env: ['KALYPSO_EMBEDDED_PG_PASSWORD'],
    default: 'kalypso',
    description: 'Password of the `postgres` user of the embedded PostgreSQL (set when its data is first created).',
    parse: text,
    secret: true,
  } satisfies Setting<string>,
  embeddedPgRestartTimeout: {
    flag: 'embedded-pg-restart-timeout',
    group: 'database',
    env: ['KALYPSO_EMBEDDED_PG_RESTART_TIMEOUT'],
    default: 60_000,
    description: 'How long a crashed embedded PostgreSQL may take to come back (the hub restarts it) before `/healthz` fails, so that an orchestrator restarts the hub.',
    parse: duration,
    shownDefault: '60s',
  } satisfies Setting<number>,
  dbPoolSize: {
    flag: 'db-pool-size',
    group: 'database',
    env: ['KALYPSO_DB_POOL_SIZE'],
    default: 10,
    description: 'Database connections of this hub process.',
    parse: positiveInteger,
  } satisfies Setting<number>,
} as const;

export const DATABASE_TUNING = {
  /** How long to wait for a connection before the database counts as unavailable. */
  connectTimeoutMs: 5_000,
  /** How long the embedded server may take to accept connections after it is started. */
  embeddedReadyTimeoutMs: 60_000,
  /** How long the embedded server may take to stop on a signal before the next, harder one. */
  embeddedStopTimeoutMs: 30_000,
  /** The supervisor's first wait before restarting an embedded server that died (then backing off). */
  embeddedFirstRestartMs: 250,
} as const;
