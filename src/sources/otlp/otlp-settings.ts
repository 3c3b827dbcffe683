// The OTLP receiver's settings (ports, ingest tokens, request limits), the numbers that shape its
// write path, and its options made from both.
import { port, positiveInteger, size, tokens } from '../../config/setting-parsers.ts';
import type { OtlpAccess } from './otlp-access.ts';
import type { ConfigOf, Setting } from '../../config/setting.ts';
import type { HTTP_SETTINGS } from '../../http/http-settings.ts';
import { DEFAULT_OTLP_LIMITS } from '../../normalize/otlp-limits.ts';
import type { TlsFiles } from '../../security/tls-files.ts';
import type { DATABASE_SETTINGS } from '../../store/database-settings.ts';
import type { OtlpSourceOptions } from './otlp-source.ts';

export const OTLP_SETTINGS = {
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
} as const;

export const OTLP_TUNING = {
  /**
   * Records one transaction takes from waiting exports (group commit). Measured with 32 and 64
   * collectors sending batches of 100 (`npm run bench -- --only ingest-many`): 2,000 gained 17–21 %
   * throughput with a tail no longer than without grouping; 10,000 gained 10 % and made everyone in
   * a group wait for a long transaction (ack p99 +20–50 %).
   */
  maxRecordsPerGroup: 2_000,
  /**
   * Transactions exports of fewer than 1,000 records (half a group) may run at once; more of them
   * wait and are written together. Measured with 32 and 64 collectors sending batches of 100
   * (`npm run bench -- --only ingest-many`, alternating runs): with every slot open to them, 14,417–
   * 16,584 records/s; with 2, 17,900–24,571 (1: 17,852–18,451; 3: 19,111–21,439; 4: 14,548–19,905).
   * Exports of 1,000 records and more may use every slot, as before: grouping them was slower.
   */
  smallExportTransactions: 2,
  /** Batches allowed to wait for a turn to write before the hub answers "overloaded, retry later". */
  maxQueuedWrites: 64,
  /** Pool connections left to the API and the timers (refreshes, partitions) while ingest writes. */
  connectionsKeptFromIngest: 2,
  /** Seconds a sender is asked to wait when the hub is overloaded (as opposed to the database being down). */
  overloadRetrySeconds: 1,
} as const;

/** The settings the receiver's options are made from: its own, and where and how the hub listens and writes. */
export type OtlpConfig = ConfigOf<typeof OTLP_SETTINGS & Pick<typeof HTTP_SETTINGS, 'listenHost' | 'shutdownTimeout'> & Pick<typeof DATABASE_SETTINGS, 'dbPoolSize'>>;

/** The receiver's options from the hub's settings; `tls` and `decodeMemoryBytes` come from the hub. */
export function otlpOptionsFrom(
  config: OtlpConfig,
  from: { readonly tls: TlsFiles | undefined; readonly decodeMemoryBytes: number | undefined; readonly access?: OtlpAccess | undefined },
): OtlpSourceOptions {
  return {
    host: config.listenHost,
    grpcPort: config.otlpGrpcPort,
    httpPort: config.otlpHttpPort,
    maxRequestBytes: config.maxRequestSize,
    limits: {
      maxRecordsPerRequest: config.maxRecordsPerRequest,
      maxAttributes: config.maxAttributes,
      maxAttributeValueLength: config.maxAttributeValueLength,
    },
    tokens: config.ingestToken,
    access: from.access,
    tls: from.tls,
    decodeMemoryBytes: from.decodeMemoryBytes,
    maxConcurrentWrites: Math.max(1, config.dbPoolSize - OTLP_TUNING.connectionsKeptFromIngest),
    maxQueuedWrites: OTLP_TUNING.maxQueuedWrites,
    maxRecordsPerGroup: OTLP_TUNING.maxRecordsPerGroup,
    smallExportSlots: OTLP_TUNING.smallExportTransactions,
    shutdownDeadlineMs: config.shutdownTimeout,
  };
}
