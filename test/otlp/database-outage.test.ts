// PostgreSQL stops mid-test: the receivers answer with retryable statuses (never UNKNOWN/500),
// the API with 503, and once it is back the retried data is stored exactly once.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHub } from '../../src/hub.ts';
import { createLogger } from '../../src/log/logger.ts';
import { EmbeddedPostgres } from '../../src/store/embedded/embedded-postgres.ts';
import { otlpTypes } from '../../src/sources/otlp/otlp-proto.ts';
import { FAST_TEST_SETTINGS } from '../support/global-database.ts';
import { stateLog } from '../support/kalypso-logs.ts';
import { buildLogRecords, createExporter, ExportResultCode, exportLogs } from '../support/otlp-client.ts';
import { freePort } from '../support/ports.ts';
import { grpcExport, httpExport, protobufRequest } from '../support/raw-otlp.ts';
import { minute } from '../support/records.ts';
import { startTestHub } from '../support/test-hub.ts';

let directory: string;
let server: EmbeddedPostgres;
let hub: RunningHub;

beforeAll(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'kalypso-outage-'));
  await chmod(directory, 0o755);
  server = new EmbeddedPostgres(
    { dataDir: directory, port: await freePort(), password: 'test', database: 'kalypso', settings: FAST_TEST_SETTINGS },
    createLogger('silent'),
  );
  await server.start();
  hub = await startTestHub(server.url);
});

afterAll(async () => {
  await hub.stop();
  await server.stop();
  await rm(directory, { recursive: true, force: true });
});

const historyCount = async (host: string): Promise<number> => {
  const rows = await hub.database.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM deployment_state_history h
       JOIN reconciler r ON r.id = h.reconciler_id JOIN host ON host.id = r.host_id WHERE host.name = $1`,
    [host],
  );
  return rows.rows[0]!.n;
};

describe('PostgreSQL unavailable', () => {
  it('answers UNAVAILABLE with RetryInfo and 503 with Retry-After, then stores the retry exactly once', async () => {
    const first = await buildLogRecords([stateLog({ host: 'outage-a', commit: 'c1', at: minute(1) })]);
    const both = await buildLogRecords([
      stateLog({ host: 'outage-a', commit: 'c1', at: minute(1) }),
      stateLog({ host: 'outage-b', commit: 'c1', status: 'in_progress', at: minute(2) }),
    ]);
    const grpcExporter = createExporter('grpc', hub.ports);
    expect((await exportLogs(grpcExporter, first)).code).toBe(ExportResultCode.SUCCESS);

    await server.stop();

    const failed = await exportLogs(grpcExporter, both);
    expect(failed.code).toBe(ExportResultCode.FAILED);
    expect((failed.error as grpc.ServiceError).code).toBe(grpc.status.UNAVAILABLE);

    const raw = await grpcExport(hub.ports.otlpGrpc, protobufRequest(both));
    expect(raw.error?.code).toBe(grpc.status.UNAVAILABLE);
    const details = raw.error?.metadata.get('grpc-status-details-bin')[0] as Buffer;
    const status = otlpTypes.Status.decode(details) as unknown as { details: { typeUrl: string; value: Uint8Array }[] };
    expect(status.details[0]?.typeUrl).toBe('type.googleapis.com/google.rpc.RetryInfo');
    const retryInfo = otlpTypes.RetryInfo.toObject(otlpTypes.RetryInfo.decode(status.details[0]!.value), { longs: Number });
    expect(retryInfo).toEqual({ retryDelay: { seconds: 5 } });

    const http = await httpExport(hub.ports.otlpHttp, protobufRequest(both));
    expect(http.status).toBe(503);
    expect(http.headers.get('retry-after')).toBe('5');
    expect((await fetch(`http://127.0.0.1:${hub.ports.http}/readyz`)).status).toBe(503);
    expect((await fetch(`http://127.0.0.1:${hub.ports.http}/healthz`)).status).toBe(200);
    const api = await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1/environments`);
    expect(api.status).toBe(503);
    const port = new URL(server.url).port;
    expect(await api.json()).toEqual({
      error: { code: 'database_unavailable', message: `cannot reach the database at 127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}; retry later` },
    });

    await server.start();

    // The collector retries the very same request.
    expect((await exportLogs(grpcExporter, both)).code).toBe(ExportResultCode.SUCCESS);
    expect(await historyCount('outage-a')).toBe(1);
    expect(await historyCount('outage-b')).toBe(1);
    expect((await fetch(`http://127.0.0.1:${hub.ports.http}/readyz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${hub.ports.http}/api/v1/environments`)).status).toBe(200);
    await grpcExporter.shutdown();
  });

  it('lets the SDK HTTP exporter retry through an outage (503 + Retry-After) until the data is stored', async () => {
    const records = await buildLogRecords([stateLog({ host: 'outage-http', commit: 'c7', at: minute(3) })]);
    const exporter = createExporter('http-protobuf', hub.ports);
    await server.stop();
    const pending = exportLogs(exporter, records);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await server.start();
    expect((await pending).code).toBe(ExportResultCode.SUCCESS);
    expect(await historyCount('outage-http')).toBe(1);
    await exporter.shutdown();
  });
});
