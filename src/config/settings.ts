// Every setting of the hub in one table: its flag, environment variables, default, and how its
// text is checked. Precedence, everywhere: command-line flag > KALYPSO_* variable > generic
// variable (DATABASE_URL) > default.
import { LOG_FORMATS, LOG_LEVELS } from '../log/logger.ts';
import { ok, refused, type Result } from '../model/result.ts';
import { FIELD_LIMITS } from '../normalize/field-reader.ts';
import { DEFAULT_OTLP_LIMITS } from '../normalize/otlp-limits.ts';
import { postgresUrlParts } from './postgres-url.ts';
import { formatDuration, parseDuration, parseSize } from './units.ts';

/** The groups help and the README list the settings in, in this order, with their titles. */
export const SETTING_GROUPS = {
  network: 'Network',
  database: 'Database',
  security: 'Security',
  sources: 'Sources',
  state: 'State and history',
  limits: 'Limits',
  logging: 'Logging and shutdown',
} as const;
export type SettingGroup = keyof typeof SETTING_GROUPS;

export interface Setting<T> {
  readonly flag: string;
  readonly group: SettingGroup;
  readonly env: readonly string[];
  readonly default: T;
  /** Shown in help and in the README's configuration table. */
  readonly description: string;
  readonly parse: (text: string) => Result<T>;
  /** The default as users would write it. */
  readonly shownDefault?: string;
  /** Secret values are never printed. */
  readonly secret?: boolean;
  /** A switch: `--flag` alone means true (the environment variable takes true/false). */
  readonly boolean?: true;
}

const port = (text: string): Result<number> => {
  const value = Number(text);
  return /^\d+$/.test(text.trim()) && value <= 65_535 ? ok(value) : refused('must be a port number from 0 to 65535');
};
const positiveInteger = (text: string): Result<number> =>
  /^\d+$/.test(text.trim()) && Number(text) > 0 ? ok(Number(text)) : refused('must be a positive integer');
const duration = (text: string): Result<number> => {
  const value = parseDuration(text);
  return value !== undefined && value > 0 ? ok(value) : refused('must be a duration such as 30s, 15m or 1h');
};
const retention = (text: string): Result<number> => {
  if (text.trim() === '0') return ok(0);
  const value = parseDuration(text);
  return value !== undefined && value >= 86_400_000 ? ok(value) : refused('must be 0 (keep forever) or a duration of at least 1d, such as 400d');
};
const size = (text: string): Result<number> => {
  const value = parseSize(text);
  return value !== undefined && value > 0 ? ok(value) : refused('must be a size such as 64MiB or 1048576');
};
const text = (value: string): Result<string> => (value.trim() === '' ? refused('must not be empty') : ok(value.trim()));
const optionalText = (value: string): Result<string | undefined> => ok(value.trim() === '' ? undefined : value.trim());
// Several tokens, comma-separated, let a token be rotated without a moment when clients fail.
const tokens = (value: string): Result<readonly string[] | undefined> => {
  const list = value.split(',').map((token) => token.trim()).filter((token) => token !== '');
  return ok(list.length === 0 ? undefined : list);
};
const postgresUrl = (value: string): Result<string | undefined> => {
  if (value.trim() === '') return ok(undefined);
  const url = postgresUrlParts(value.trim());
  if (url === undefined) return refused('must be a postgres:// URL');
  return url.protocol === 'postgres:' || url.protocol === 'postgresql:' ? ok(value.trim()) : refused('must be a postgres:// or postgresql:// URL');
};
// Environment names as the normalizer stores them (trimmed, at most 253 characters), so that a
// name in the setting can match an environment the hub has seen. A duplicate would give one
// environment two places, so it is refused rather than resolved silently.
const environmentOrder = (value: string): Result<readonly string[]> => {
  if (value.trim() === '') return ok([]);
  const names = value.split(',').map((name) => name.trim());
  if (names.includes('')) return refused('must be environment names separated by commas, none empty');
  if (names.some((name) => name.length > FIELD_LIMITS.name)) return refused(`environment names are at most ${FIELD_LIMITS.name} characters`);
  const duplicate = names.find((name, index) => names.indexOf(name) !== index);
  if (duplicate !== undefined) return refused(`environment ${JSON.stringify(duplicate)} is listed twice`);
  return ok(names);
};
const oneOf =
  <T extends string>(values: readonly T[]) =>
  (value: string): Result<T> =>
    values.includes(value.trim().toLowerCase() as T)
      ? ok(value.trim().toLowerCase() as T)
      : refused(`must be one of ${values.join(', ')}`);

export const SETTINGS = {
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
  otlpGrpcPort: {
    flag: 'otlp-grpc-port',
    group: 'network',
    env: ['KALYPSO_OTLP_GRPC_PORT'],
    default: 4317,
    description: 'OTLP/gRPC logs receiver.',
    parse: port,
  } satisfies Setting<number>,
  otlpHttpPort: {
    flag: 'otlp-http-port',
    group: 'network',
    env: ['KALYPSO_OTLP_HTTP_PORT'],
    default: 4318,
    description: 'OTLP/HTTP logs receiver (`POST /v1/logs`).',
    parse: port,
  } satisfies Setting<number>,
  ingestToken: {
    flag: 'ingest-token',
    group: 'security',
    env: ['KALYPSO_INGEST_TOKEN'],
    default: undefined,
    description:
      'When set, OTLP exports must carry `authorization: Bearer <token>`. Several tokens, comma-separated, are all accepted (rotation).',
    parse: tokens,
    shownDefault: '(none)',
    secret: true,
  } satisfies Setting<readonly string[] | undefined>,
  apiToken: {
    flag: 'api-token',
    group: 'security',
    env: ['KALYPSO_API_TOKEN'],
    default: undefined,
    description:
      'When set, `/api/v1` requests must carry `authorization: Bearer <token>` (the web UI asks for it). Comma-separated: several accepted. Health, metrics and the OpenAPI document stay open.',
    parse: tokens,
    shownDefault: '(none)',
    secret: true,
  } satisfies Setting<readonly string[] | undefined>,
  tlsCertFile: {
    flag: 'tls-cert-file',
    group: 'security',
    env: ['KALYPSO_TLS_CERT_FILE'],
    default: undefined,
    description:
      'PEM certificate (chain) for TLS on the API and both OTLP receivers; needs `--tls-key-file`. Re-read when the file changes (e.g. renewed by cert-manager).',
    parse: optionalText,
    shownDefault: '(plain text)',
  } satisfies Setting<string | undefined>,
  tlsKeyFile: {
    flag: 'tls-key-file',
    group: 'security',
    env: ['KALYPSO_TLS_KEY_FILE'],
    default: undefined,
    description: 'PEM private key of `--tls-cert-file`.',
    parse: optionalText,
    shownDefault: '(none)',
  } satisfies Setting<string | undefined>,
  maxRequestSize: {
    flag: 'max-request-size',
    group: 'limits',
    env: ['KALYPSO_MAX_REQUEST_SIZE'],
    default: 64 * 1_048_576,
    description: 'Largest OTLP request accepted, after decompression.',
    parse: size,
    shownDefault: '64MiB',
  } satisfies Setting<number>,
  maxRecordsPerRequest: {
    flag: 'max-records-per-request',
    group: 'limits',
    env: ['KALYPSO_MAX_RECORDS_PER_REQUEST'],
    default: DEFAULT_OTLP_LIMITS.maxRecordsPerRequest,
    description: 'Most log records in one OTLP request; a larger request is refused whole (413 / `RESOURCE_EXHAUSTED`).',
    parse: positiveInteger,
  } satisfies Setting<number>,
  maxAttributes: {
    flag: 'max-attributes',
    group: 'limits',
    env: ['KALYPSO_MAX_ATTRIBUTES'],
    default: DEFAULT_OTLP_LIMITS.maxAttributes,
    description: 'Most attributes on one log record or resource; a Kalypso record over it is rejected (partial success).',
    parse: positiveInteger,
  } satisfies Setting<number>,
  maxAttributeValueLength: {
    flag: 'max-attribute-value-length',
    group: 'limits',
    env: ['KALYPSO_MAX_ATTRIBUTE_VALUE_LENGTH'],
    default: DEFAULT_OTLP_LIMITS.maxAttributeValueLength,
    description: 'Longest attribute key or value (characters); a Kalypso record with a longer one is rejected (partial success).',
    parse: positiveInteger,
  } satisfies Setting<number>,
  staleAfter: {
    flag: 'stale-after',
    group: 'state',
    env: ['KALYPSO_STALE_AFTER'],
    default: 15 * 60_000,
    description: 'A reconciler whose last report is older than this is stale (never counted as success).',
    parse: duration,
    shownDefault: formatDuration(15 * 60_000),
  } satisfies Setting<number>,
  environmentOrder: {
    flag: 'environment-order',
    group: 'state',
    env: ['KALYPSO_ENVIRONMENT_ORDER'],
    default: [],
    description:
      'Promotion order, comma-separated (e.g. `dev,qa,prod`): these environments come first, in this order; the others follow in the order first seen. Empty: all in the order first seen.',
    parse: environmentOrder,
    shownDefault: '(none)',
  } satisfies Setting<readonly string[]>,
  historyRetention: {
    flag: 'history-retention',
    group: 'state',
    env: ['KALYPSO_HISTORY_RETENTION'],
    default: 0,
    description:
      'How long state history is kept, in whole months (a month goes when all of it is older). 0: forever. Current states are always kept.',
    parse: retention,
    shownDefault: '0',
  } satisfies Setting<number>,
  maxWait: {
    flag: 'max-wait',
    group: 'limits',
    env: ['KALYPSO_MAX_WAIT'],
    default: 5 * 60_000,
    description: 'Longest `wait` a rollout-gate request may ask for (longer waits: call again).',
    parse: duration,
    shownDefault: formatDuration(5 * 60_000),
  } satisfies Setting<number>,
  dbPoolSize: {
    flag: 'db-pool-size',
    group: 'database',
    env: ['KALYPSO_DB_POOL_SIZE'],
    default: 10,
    description: 'Database connections of this hub process.',
    parse: positiveInteger,
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
  kube: {
    flag: 'kube',
    group: 'sources',
    env: ['KALYPSO_KUBE'],
    default: 'auto',
    description:
      'Kubernetes CRD watcher: `auto` starts it when a kubeconfig (KUBECONFIG, ~/.kube/config) or an in-cluster service account is found.',
    parse: oneOf(['auto', 'on', 'off'] as const),
  } satisfies Setting<'auto' | 'on' | 'off'>,
  kubeNamespaces: {
    flag: 'kube-namespaces',
    group: 'sources',
    env: ['KALYPSO_KUBE_NAMESPACES'],
    default: [],
    description: 'Namespaces to watch, comma-separated (Flux Kustomizations are read from the same ones). Empty: all.',
    parse: (value: string) => ok(value.split(',').map((name) => name.trim()).filter((name) => name !== '')),
    shownDefault: '(all)',
  } satisfies Setting<readonly string[]>,
  kubeResync: {
    flag: 'kube-resync',
    group: 'sources',
    env: ['KALYPSO_KUBE_RESYNC'],
    default: 10 * 60_000,
    description:
      'How often the CRD watcher re-processes every watched resource (and, when shorter than a third of `--stale-after`, confirms Reconcilers without a heartbeat).',
    parse: duration,
    shownDefault: '10m',
  } satisfies Setting<number>,
  leaderElectionNamespace: {
    flag: 'leader-election-namespace',
    group: 'sources',
    env: ['KALYPSO_LEADER_ELECTION_NAMESPACE'],
    default: undefined,
    description: 'Namespace of the leader-election Lease. Default: the hub’s own namespace in a cluster, else `default`.',
    parse: optionalText,
    shownDefault: '(own)',
  } satisfies Setting<string | undefined>,
  leaderElectionLease: {
    flag: 'leader-election-lease',
    group: 'sources',
    env: ['KALYPSO_LEADER_ELECTION_LEASE'],
    default: 'kalypso-hub',
    description: 'Name of the Lease the hub replicas elect their leader with.',
    parse: text,
  } satisfies Setting<string>,
  argConfig: {
    flag: 'arg-config',
    group: 'sources',
    env: ['KALYPSO_ARG_CONFIG'],
    default: undefined,
    description: 'YAML/JSON list of Azure Resource Graph sources to poll without Kubernetes (fields as in the AzureResourceGraph spec, plus `name`).',
    parse: optionalText,
    shownDefault: '(none)',
  } satisfies Setting<string | undefined>,
  armEndpoint: {
    flag: 'arm-endpoint',
    group: 'sources',
    env: ['KALYPSO_ARM_ENDPOINT'],
    default: 'https://management.azure.com',
    description: 'Azure Resource Manager endpoint (sovereign clouds); the authority comes from `AZURE_AUTHORITY_HOST`.',
    parse: (value: string) => {
      try {
        const url = new URL(value.trim());
        return url.protocol === 'https:' ? ok(value.trim().replace(/\/+$/, '')) : refused('must be an https:// URL');
      } catch {
        return refused('must be an https:// URL');
      }
    },
  } satisfies Setting<string>,
  demo: {
    flag: 'demo',
    group: 'sources',
    env: ['KALYPSO_DEMO'],
    default: false,
    description: 'Feed a demo fleet through the hub’s own OTLP receiver on start, and keep it moving.',
    parse: (value: string) =>
      ['true', '1', 'yes', 'on'].includes(value.trim().toLowerCase())
        ? ok(true)
        : ['false', '0', 'no', 'off', ''].includes(value.trim().toLowerCase())
          ? ok(false)
          : refused('must be true or false'),
    boolean: true,
  } satisfies Setting<boolean>,
  logLevel: {
    flag: 'log-level',
    group: 'logging',
    env: ['KALYPSO_LOG_LEVEL'],
    default: 'info',
    description: `Log level: ${LOG_LEVELS.join(', ')}.`,
    parse: oneOf(LOG_LEVELS),
  } satisfies Setting<(typeof LOG_LEVELS)[number]>,
  logFormat: {
    flag: 'log-format',
    group: 'logging',
    env: ['KALYPSO_LOG_FORMAT'],
    default: 'auto',
    description:
      'Log lines: `json` (one JSON object per line, for log pipelines), `pretty` (one readable line per record) or `auto`: pretty when stdout is a terminal, else json.',
    parse: oneOf(LOG_FORMATS),
  } satisfies Setting<(typeof LOG_FORMATS)[number]>,
} as const;

export type SettingName = keyof typeof SETTINGS;
