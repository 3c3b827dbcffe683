// Raw OTLP transports, for cases the SDK exporters cannot express (bad payloads, exact status
// codes and trailers).
import * as grpc from '@grpc/grpc-js';
import { ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';

export function protobufRequest(records: readonly ReadableLogRecord[]): Buffer {
  return Buffer.from(ProtobufLogsSerializer.serializeRequest([...records])!);
}

export interface GrpcAnswer {
  readonly error: grpc.ServiceError | null;
  readonly response: Buffer | undefined;
}

export async function grpcExport(
  port: number,
  body: Buffer,
  metadata = new grpc.Metadata(),
  options: { gzip?: boolean } = {},
): Promise<GrpcAnswer> {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    'grpc.max_send_message_length': 256 * 1024 * 1024,
    ...(options.gzip === true ? { 'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip } : {}),
  });
  try {
    return await new Promise((resolve) => {
      client.makeUnaryRequest(
        '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
        (value: Buffer) => value,
        (value: Buffer) => value,
        body,
        metadata,
        (error, response) => resolve({ error, response }),
      );
    });
  } finally {
    client.close();
  }
}

export async function httpExport(
  port: number,
  body: Uint8Array | string,
  headers: Record<string, string> = { 'content-type': 'application/x-protobuf' },
): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/v1/logs`, { method: 'POST', body, headers });
}
