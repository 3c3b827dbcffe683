// The OTLP receiver as one Source: gRPC and HTTP listeners over one shared export pipeline.
import type { HubConfig } from '../../config/config.ts';
import type { Logger } from '../../log/logger.ts';
import type { OtlpLimits } from '../../normalize/otlp-limits.ts';
import { type HubMetrics, registerDecodeMemoryMetrics } from '../../metrics/hub-metrics.ts';
import { type HttpListener, listenHttp } from '../../http/listen.ts';
import type { TlsFiles } from '../../security/tls-files.ts';
import type { Source } from '../source.ts';
import type { RecordSink } from '../../model/record-sink.ts';
import { DecodeMemory } from './decode-memory.ts';
import { GroupCommit } from './group-commit.ts';
import { GrpcReceiver } from './grpc-receiver.ts';
import { createOtlpHttpApp } from './http-receiver.ts';
import { LogsExport } from './logs-export.ts';

/**
 * Records one transaction takes from waiting exports (group commit). Measured with 32 and 64
 * collectors sending batches of 100 (`npm run bench -- --only ingest-many`): 2,000 gained 17–21 %
 * throughput with a tail no longer than without grouping; 10,000 gained 10 % and made everyone in
 * a group wait for a long transaction (ack p99 +20–50 %).
 */
const MAX_RECORDS_PER_GROUP = 2_000;

/**
 * Transactions exports of fewer than 1,000 records (half a group) may run at once; more of them
 * wait and are written together. Measured with 32 and 64 collectors sending batches of 100
 * (`npm run bench -- --only ingest-many`, alternating runs): with every slot open to them, 14,417–
 * 16,584 records/s; with 2, 17,900–24,571 (1: 17,852–18,451; 3: 19,111–21,439; 4: 14,548–19,905).
 * Exports of 1,000 records and more may use every slot, as before: grouping them was slower.
 */
const SMALL_EXPORT_TRANSACTIONS = 2;

/** Batches allowed to wait for a turn to write before the hub answers "overloaded, retry later". */
const MAX_QUEUED_WRITES = 64;
/** Pool connections left to the API and the timers (refreshes, partitions) while ingest writes. */
const CONNECTIONS_KEPT_FROM_INGEST = 2;

export interface OtlpSourceOptions {
  readonly host: string;
  readonly grpcPort: number;
  readonly httpPort: number;
  readonly maxRequestBytes: number;
  readonly limits: OtlpLimits;
  /** Memory for decoding requests, shared by both transports (default: half the heap). */
  readonly decodeMemoryBytes: number | undefined;
  readonly tokens: readonly string[] | undefined;
  /** When set, both receivers speak TLS only. */
  readonly tls: TlsFiles | undefined;
  /** Batches written at once, and batches allowed to wait for a turn before the hub says "overloaded". */
  readonly maxConcurrentWrites: number;
  readonly maxQueuedWrites: number;
  readonly shutdownDeadlineMs: number;
}

/** The receiver's options from the hub's settings; `tls` and `decodeMemoryBytes` come from the hub. */
export function otlpOptionsFrom(
  config: HubConfig,
  from: { readonly tls: TlsFiles | undefined; readonly decodeMemoryBytes: number | undefined },
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
    tls: from.tls,
    decodeMemoryBytes: from.decodeMemoryBytes,
    maxConcurrentWrites: Math.max(1, config.dbPoolSize - CONNECTIONS_KEPT_FROM_INGEST),
    maxQueuedWrites: MAX_QUEUED_WRITES,
    shutdownDeadlineMs: config.shutdownTimeout,
  };
}

export class OtlpSource implements Source {
  readonly name = 'otlp';
  readonly #options: OtlpSourceOptions;
  readonly #metrics: HubMetrics;
  readonly #log: Logger;
  #grpc: GrpcReceiver | undefined;
  #http: HttpListener | undefined;
  #stopping: Promise<void> | undefined;

  constructor(options: OtlpSourceOptions, metrics: HubMetrics, log: Logger) {
    this.#options = options;
    this.#metrics = metrics;
    this.#log = log.child({ source: 'otlp' });
  }

  get ports(): { grpc: number; http: number } {
    return { grpc: this.#grpc?.port ?? 0, http: this.#http?.port ?? 0 };
  }

  async start(sink: RecordSink, signal: AbortSignal): Promise<void> {
    const options = this.#options;
    const decodeMemory = options.decodeMemoryBytes === undefined ? DecodeMemory.halfOfHeap() : new DecodeMemory(options.decodeMemoryBytes);
    registerDecodeMemoryMetrics(this.#metrics, decodeMemory);
    const logsExport = new LogsExport({
      groupCommit: new GroupCommit(
        sink,
        {
          maxActive: options.maxConcurrentWrites,
          maxWaiting: options.maxQueuedWrites,
          maxRecordsPerGroup: MAX_RECORDS_PER_GROUP,
          smallExportSlots: SMALL_EXPORT_TRANSACTIONS,
        },
        (exports) => this.#metrics.ingestGroupExports.observe(exports),
      ),
      metrics: this.#metrics,
      log: this.#log,
      limits: options.limits,
      decodeMemory,
    });
    this.#grpc = new GrpcReceiver(
      logsExport,
      { host: options.host, port: options.grpcPort, maxMessageBytes: options.maxRequestBytes, tokens: options.tokens, tls: options.tls },
      this.#log,
    );
    await this.#grpc.listen();
    this.#http = await listenHttp(
      createOtlpHttpApp(logsExport, { maxBodyBytes: options.maxRequestBytes, tokens: options.tokens }, this.#log),
      options.host,
      options.httpPort,
      options.tls,
    );
    signal.addEventListener('abort', () => void this.stop(), { once: true });
    this.#log.info({ grpcPort: this.#grpc.port, httpPort: this.#http.port }, 'OTLP receiver listening');
  }

  /**
   * Stops listening and waits for in-flight exports. Called twice on shutdown (the abort signal,
   * then the hub's cleanup): every call must wait for the same drain, or the hub would go on to
   * close the database and exit while gRPC answers are still being sent.
   */
  stop(): Promise<void> {
    this.#stopping ??= this.#drain();
    return this.#stopping;
  }

  async #drain(): Promise<void> {
    const grpc = this.#grpc;
    const http = this.#http;
    this.#grpc = undefined;
    this.#http = undefined;
    await Promise.all([grpc?.close(this.#options.shutdownDeadlineMs), http?.close(this.#options.shutdownDeadlineMs)]);
  }
}
