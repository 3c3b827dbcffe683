// The OTLP receiver as one Source: gRPC and HTTP listeners over one shared export pipeline. Its
// settings, tunables and options: otlp-settings.ts.
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
import { ingestGate, type OtlpAccess } from './otlp-access.ts';
import { Authenticator } from '../../security/authenticator.ts';
import { FailedAuthThrottle } from '../../security/failed-auth-throttle.ts';
import { LogsExport } from './logs-export.ts';

export interface OtlpSourceOptions {
  readonly host: string;
  readonly grpcPort: number;
  readonly httpPort: number;
  readonly maxRequestBytes: number;
  readonly limits: OtlpLimits;
  /** Memory for decoding requests, shared by both transports (default: half the heap). */
  readonly decodeMemoryBytes: number | undefined;
  readonly tokens: readonly string[] | undefined;
  /** The hub's identities (service tokens, issuers); without it, `tokens` alone decide. */
  readonly access?: OtlpAccess | undefined;
  /** When set, both receivers speak TLS only. */
  readonly tls: TlsFiles | undefined;
  /** Batches written at once, and batches allowed to wait for a turn before the hub says "overloaded". */
  readonly maxConcurrentWrites: number;
  readonly maxQueuedWrites: number;
  /** Group commit: records a transaction takes from waiting exports, and transactions small exports may run at once. */
  readonly maxRecordsPerGroup: number;
  readonly smallExportSlots: number;
  readonly shutdownDeadlineMs: number;
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
          maxRecordsPerGroup: options.maxRecordsPerGroup,
          smallExportSlots: options.smallExportSlots,
        },
        (exports) => this.#metrics.ingestGroupExports.observe(exports),
      ),
      metrics: this.#metrics,
      log: this.#log,
      limits: options.limits,
      decodeMemory,
    });
    const access = options.access ?? { authenticator: new Authenticator({ ingestTokens: options.tokens }), throttle: new FailedAuthThrottle() };
    const gate = ingestGate(access, this.#metrics, this.#log);
    this.#grpc = new GrpcReceiver(
      logsExport,
      { host: options.host, port: options.grpcPort, maxMessageBytes: options.maxRequestBytes, gate, tls: options.tls },
      this.#log,
    );
    await this.#grpc.listen();
    this.#http = await listenHttp(
      createOtlpHttpApp(logsExport, { maxBodyBytes: options.maxRequestBytes, gate, tls: options.tls !== undefined }, this.#log),
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
