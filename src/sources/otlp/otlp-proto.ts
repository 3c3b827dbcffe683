// The OTLP protobuf schema, loaded once from the .proto files kept next to this module.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Long from 'long';
import protobuf from 'protobufjs';

const PROTO_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'proto');

// 64-bit fields (timestamps in nanoseconds) must decode exactly; with Long they arrive as
// (high, low) pairs instead of doubles that lose the last digits.
protobuf.util.Long = Long;
protobuf.configure();

function loadRoot(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(PROTO_DIR, target);
  root.loadSync(
    [
      'opentelemetry/proto/collector/logs/v1/logs_service.proto',
      'google/rpc/status.proto',
      'google/rpc/error_details.proto',
    ],
    { keepCase: false },
  );
  root.resolveAll();
  return root;
}

const root = loadRoot();

export const otlpTypes = {
  ExportLogsServiceRequest: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest'),
  ExportLogsServiceResponse: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse'),
  Status: root.lookupType('google.rpc.Status'),
  RetryInfo: root.lookupType('google.rpc.RetryInfo'),
} as const;

export const LOGS_EXPORT_PATH = '/opentelemetry.proto.collector.logs.v1.LogsService/Export';
