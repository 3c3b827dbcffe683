// OTLP/gRPC logs receiver (`LogsService/Export`). The request arrives as raw bytes and goes to
// the shared decoder; every outcome maps to a status a collector handles correctly — never
// UNKNOWN or INTERNAL, which collectors treat as permanent and drop.
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../../log/logger.ts';
import type { TlsFiles } from '../../security/tls-files.ts';
import { walkLogsProtobuf } from './decode-protobuf.ts';
import type { ExportOutcome, LogsExport } from './logs-export.ts';
import type { IngestGate } from './otlp-access.ts';
import { LOGS_EXPORT_PATH, otlpTypes } from './otlp-proto.ts';
import { RETRY_LATER_SECONDS } from '../../store/retry-policy.ts';

export interface GrpcReceiverOptions {
  readonly host: string;
  readonly port: number;
  readonly maxMessageBytes: number;
  /** Who may export; undefined: everyone. */
  readonly gate: IngestGate | undefined;
  readonly tls: TlsFiles | undefined;
}

const passThrough = (bytes: Buffer): Buffer => bytes;

/** `ipv4:1.2.3.4:5678` / `ipv6:[::1]:5678` / `1.2.3.4:5678` → the address alone (the throttle's key). */
function peerAddress(peer: string): string {
  const bare = peer.replace(/^ipv[46]:/, '');
  return bare.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
}

const logsService: grpc.ServiceDefinition = {
  Export: {
    path: LOGS_EXPORT_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: passThrough,
    requestDeserialize: passThrough,
    responseSerialize: passThrough,
    responseDeserialize: passThrough,
    originalName: 'export',
  },
};

export class GrpcReceiver {
  readonly #server: grpc.Server;
  readonly #options: GrpcReceiverOptions;
  #port = 0;

  constructor(logsExport: LogsExport, options: GrpcReceiverOptions, log: Logger) {
    this.#options = options;
    this.#server = new grpc.Server({
      'grpc.max_receive_message_length': options.maxMessageBytes,
      'grpc.max_send_message_length': 4 * 1024 * 1024,
    });
    const handler: grpc.handleUnaryCall<Buffer, Buffer> = (call, callback) => {
      // `workspaces`: those the sender's credential may send reports of; undefined for every one.
      const exported = (workspaces?: readonly string[]): void => {
        logsExport
          .export('grpc', { bytes: call.request.length, encoding: 'protobuf' }, (visitor) => walkLogsProtobuf(call.request, visitor), workspaces)
          .then((outcome) => answer(outcome, callback))
          .catch((error: unknown) => {
            log.error({ err: error }, 'OTLP/gRPC export failed');
            answer({ kind: 'unavailable', retryAfterSeconds: RETRY_LATER_SECONDS, message: 'internal error; retry later' }, callback);
          });
      };
      if (options.gate === undefined) return exported();
      const header = call.metadata.get('authorization')[0];
      // A proxy in front of gRPC (Envoy, an ingress) passes X-Forwarded-For as metadata.
      const forwardedFor = call.metadata.get('x-forwarded-for').map(String).join(',');
      const peer = { address: peerAddress(call.getPeer()), forwardedFor: forwardedFor === '' ? undefined : forwardedFor };
      options.gate(typeof header === 'string' ? header : undefined, peer, 'grpc')
        .then((verdict) => {
          if (verdict.kind === 'admitted') return exported(verdict.workspaces);
          const code = verdict.kind === 'forbidden' ? grpc.status.PERMISSION_DENIED : grpc.status.UNAUTHENTICATED;
          callback({ code, details: verdict.message });
        })
        .catch((error: unknown) => {
          log.error({ err: error }, 'OTLP/gRPC authentication failed');
          answer({ kind: 'unavailable', retryAfterSeconds: RETRY_LATER_SECONDS, message: 'internal error; retry later' }, callback);
        });
    };
    this.#server.addService(logsService, { Export: handler });
  }

  get port(): number {
    return this.#port;
  }

  async listen(): Promise<void> {
    this.#port = await new Promise<number>((resolve, reject) => {
      this.#server.bindAsync(
        `${this.#options.host}:${this.#options.port}`,
        this.#options.tls === undefined ? grpc.ServerCredentials.createInsecure() : reloadingCredentials(this.#options.tls),
        (error, port) => (error === null ? resolve(port) : reject(error)),
      );
    });
  }

  /** Stops accepting calls, lets in-flight exports finish, and cuts the rest at the deadline. */
  async close(deadlineMs: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        this.#server.forceShutdown();
        resolve();
      }, deadlineMs);
      force.unref();
      this.#server.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
  }
}

function answer(outcome: ExportOutcome, callback: grpc.sendUnaryData<Buffer>): void {
  switch (outcome.kind) {
    case 'ok': {
      const response =
        outcome.rejected > 0
          ? { partialSuccess: { rejectedLogRecords: outcome.rejected, errorMessage: outcome.errorMessage } }
          : {};
      callback(null, Buffer.from(otlpTypes.ExportLogsServiceResponse.encode(response).finish()));
      return;
    }
    case 'invalid':
      callback({ code: grpc.status.INVALID_ARGUMENT, details: outcome.message });
      return;
    case 'too-large':
      // Without RetryInfo, collectors drop it: the same request would exceed the limit again.
      callback({ code: grpc.status.RESOURCE_EXHAUSTED, details: outcome.message });
      return;
    case 'unavailable': {
      const metadata = new grpc.Metadata();
      metadata.set('grpc-status-details-bin', retryStatus(outcome.message, outcome.retryAfterSeconds));
      callback({ code: grpc.status.UNAVAILABLE, details: outcome.message, metadata });
      return;
    }
  }
}

/**
 * Server credentials that follow the TLS files: grpc-js asks a certificate provider for the
 * identity and applies each update to new connections.
 */
function reloadingCredentials(tls: TlsFiles): grpc.ServerCredentials {
  const listeners = new Map<grpc.experimental.IdentityCertificateUpdateListener, () => void>();
  const provider: grpc.experimental.CertificateProvider = {
    addIdentityCertificateListener: (listener) => {
      // Not synchronously: grpc-js registers its server's watcher only after adding this
      // listener, and would miss an identity delivered right away (refusing every connection).
      queueMicrotask(() => listener({ certificate: tls.identity.cert, privateKey: tls.identity.key }));
      listeners.set(listener, tls.onChange((identity) => listener({ certificate: identity.cert, privateKey: identity.key })));
    },
    removeIdentityCertificateListener: (listener) => {
      listeners.get(listener)?.();
      listeners.delete(listener);
    },
    // The hub does not ask clients for certificates: there is no CA to provide.
    addCaCertificateListener: () => undefined,
    removeCaCertificateListener: () => undefined,
  };
  // grpc-js 1.14 takes the identity provider as the first argument (its declaration calls it the
  // CA provider; the implementation passes it on as the identity) and no CA provider.
  return grpc.experimental.createCertificateProviderServerCredentials(provider, null, false);
}

/** A google.rpc.Status carrying RetryInfo: collectors wait `seconds` before retrying. */
function retryStatus(message: string, seconds: number): Buffer {
  const retryInfo = otlpTypes.RetryInfo.encode({ retryDelay: { seconds, nanos: 0 } }).finish();
  const status = otlpTypes.Status.encode({
    code: grpc.status.UNAVAILABLE,
    message,
    details: [{ typeUrl: 'type.googleapis.com/google.rpc.RetryInfo', value: retryInfo }],
  }).finish();
  return Buffer.from(status);
}
