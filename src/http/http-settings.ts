// The hub's listeners: the address every one binds, the HTTP port of the API, the web UI, health
// and metrics, and how long in-flight requests may take to finish when the hub is told to stop.
import { duration, port, text } from '../config/setting-parsers.ts';
import type { Setting } from '../config/setting.ts';

export const HTTP_SETTINGS = {
  listenHost: {
    flag: 'listen-host',
    group: 'network',
    env: ['KALYPSO_LISTEN_HOST'],
    default: '0.0.0.0',
    description: 'Address the API and the OTLP receivers listen on.',
    parse: text,
  } satisfies Setting<string>,
  httpPort: {
    flag: 'http-port',
    group: 'network',
    env: ['KALYPSO_HTTP_PORT'],
    default: 8080,
    description: 'HTTP API, web UI, health and metrics.',
    parse: port,
  } satisfies Setting<number>,
  shutdownTimeout: {
    flag: 'shutdown-timeout',
    group: 'logging',
    env: ['KALYPSO_SHUTDOWN_TIMEOUT'],
    default: 25_000,
    description: 'On SIGTERM, SIGINT (Ctrl-C) or SIGHUP (terminal closed), how long in-flight requests may take to finish.',
    parse: duration,
    shownDefault: '25s',
  } satisfies Setting<number>,
} as const;

export const HTTP_TUNING = {
  /** Collectors keep connections open between exports; keep them a little longer than they do. */
  keepAliveTimeoutMs: 65_000,
} as const;
