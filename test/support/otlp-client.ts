// Sends log records the way real clients do: through the official OpenTelemetry JS SDK
// exporters (OTLP/gRPC, OTLP/HTTP protobuf, OTLP/HTTP JSON).
import { credentials, Metadata } from '@grpc/grpc-js';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as HttpJsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as HttpProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import type { AnyValue, AnyValueMap } from '@opentelemetry/api-logs';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  InMemoryLogRecordExporter,
  type LogRecordExporter,
  LoggerProvider,
  type ReadableLogRecord,
  SimpleLogRecordProcessor,
} from '@opentelemetry/sdk-logs';

export type ExporterKind = 'grpc' | 'http-protobuf' | 'http-json';
export const EXPORTER_KINDS: readonly ExporterKind[] = ['grpc', 'http-protobuf', 'http-json'];

export interface HubPorts {
  readonly otlpGrpc: number;
  readonly otlpHttp: number;
}

export interface ExporterOptions {
  readonly gzip?: boolean;
  readonly token?: string;
  /** Speak TLS to the hub, trusting this CA certificate (PEM). */
  readonly ca?: Buffer;
}

export function createExporter(kind: ExporterKind, ports: HubPorts, options: ExporterOptions = {}): LogRecordExporter {
  const compression = options.gzip === true ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE;
  const headers = options.token === undefined ? undefined : { authorization: `Bearer ${options.token}` };
  const scheme = options.ca === undefined ? 'http' : 'https';
  const tls = options.ca === undefined ? {} : { httpAgentOptions: { ca: options.ca } };
  switch (kind) {
    case 'grpc': {
      return new GrpcLogExporter({
        url: `${scheme}://127.0.0.1:${ports.otlpGrpc}`,
        compression,
        ...(options.token === undefined ? {} : { metadata: grpcMetadata(options.token) }),
        ...(options.ca === undefined ? {} : { credentials: credentials.createSsl(options.ca) }),
      });
    }
    case 'http-protobuf':
      return new HttpProtoLogExporter({ url: `${scheme}://127.0.0.1:${ports.otlpHttp}/v1/logs`, compression, headers, ...tls });
    case 'http-json':
      return new HttpJsonLogExporter({ url: `${scheme}://127.0.0.1:${ports.otlpHttp}/v1/logs`, compression, headers, ...tls });
  }
}

function grpcMetadata(token: string): Metadata {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

export interface LogSpec {
  readonly resource: Readonly<Record<string, string>>;
  readonly eventName?: string;
  readonly attributes?: AnyValueMap;
  readonly body?: AnyValue;
  /** Record time; unset leaves time_unix_nano to the SDK (now). */
  readonly time?: Date;
}

/** Builds SDK log records exactly as an instrumented agent would emit them. */
export async function buildLogRecords(specs: readonly LogSpec[]): Promise<ReadableLogRecord[]> {
  const records: ReadableLogRecord[] = [];
  const byResource = new Map<string, LogSpec[]>();
  for (const spec of specs) {
    const key = JSON.stringify(spec.resource);
    byResource.set(key, [...(byResource.get(key) ?? []), spec]);
  }
  const order = new Map<LogSpec, number>(specs.map((spec, index) => [spec, index]));
  const built: [number, ReadableLogRecord][] = [];
  for (const group of byResource.values()) {
    const memory = new InMemoryLogRecordExporter();
    const provider = new LoggerProvider({
      resource: resourceFromAttributes(group[0]!.resource),
      processors: [new SimpleLogRecordProcessor({ exporter: memory })],
    });
    const logger = provider.getLogger('kalypso-test-agent');
    for (const spec of group) {
      logger.emit({
        ...(spec.eventName === undefined ? {} : { eventName: spec.eventName }),
        attributes: spec.attributes ?? {},
        body: spec.body,
        ...(spec.time === undefined ? {} : { timestamp: spec.time }),
      });
    }
    await provider.forceFlush();
    memory.getFinishedLogRecords().forEach((record, index) => built.push([order.get(group[index]!)!, record]));
    await provider.shutdown();
  }
  built.sort((a, b) => a[0] - b[0]);
  // Not push(...all): a spread of 100,000+ arguments overflows the stack.
  for (const [, record] of built) records.push(record);
  return records;
}

export function exportLogs(exporter: LogRecordExporter, records: readonly ReadableLogRecord[]): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export([...records], resolve));
}

export { ExportResultCode };
