// Ingest throughput through the official SDK gRPC log exporter: batches of 1,000 state reports
// (every report a transition, the write path's heaviest case), a few exports in flight at once,
// counted as committed when the hub acknowledges them.
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { buildLogRecords, createExporter, ExportResultCode, exportLogs } from '../test/support/otlp-client.ts';
import { stateLog } from '../test/support/kalypso-logs.ts';
import type { BenchHub } from './bench-hub.ts';
import { percentile, progress } from './bench-report.ts';

export interface IngestResult {
  readonly name: string;
  readonly records: number;
  readonly batchSize: number;
  readonly concurrency: number;
  readonly recordsPerSecond: number;
  readonly ackP50Ms: number;
  readonly ackP99Ms: number;
  readonly hubRssMiB: number;
}

export async function benchIngestSdkGrpc(
  hub: BenchHub,
  options: { hosts: number; reconcilersPerHost: number; rounds: number; batchSize: number; concurrency: number },
): Promise<IngestResult> {
  const { hosts, reconcilersPerHost, rounds, batchSize, concurrency } = options;
  const start = Date.UTC(2026, 10, 20);
  const batches: ReadableLogRecord[][] = [];
  for (let round = 0; round < rounds; round += 1) {
    const specs = [];
    for (let h = 0; h < hosts; h += 1) {
      for (let r = 0; r < reconcilersPerHost; r += 1) {
        specs.push(
          stateLog({
            host: `bench-host-${h}`,
            reconciler: `flux-system/workload-${r}`,
            endpoint: `https://github.com/contoso/gitops/env-${h % 4}/workload-${r}`,
            commit: (round + 1).toString(16).padStart(40, '0'),
            status: round % 2 === 0 ? 'in_progress' : 'success',
            at: new Date(start + round * 60_000 + h),
          }),
        );
      }
    }
    const records = await buildLogRecords(specs);
    for (let i = 0; i < records.length; i += batchSize) batches.push(records.slice(i, i + batchSize));
    progress(`ingest: prepared round ${round + 1}/${rounds}`);
  }

  const exporters = Array.from({ length: concurrency }, () => createExporter('grpc', hub.ports));
  const latencies: number[] = [];
  let next = 0;
  let maxRss = 0;
  const began = performance.now();
  await Promise.all(
    exporters.map(async (exporter) => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        const sent = performance.now();
        const result = await exportLogs(exporter, batch);
        if (result.code !== ExportResultCode.SUCCESS) throw new Error(`export failed: ${String(result.error)}`);
        latencies.push(performance.now() - sent);
        if (latencies.length % 20 === 0) {
          maxRss = Math.max(maxRss, await hub.rssMiB());
          progress(`ingest: ${latencies.length}/${batches.length} batches committed`);
        }
      }
    }),
  );
  const seconds = (performance.now() - began) / 1_000;
  await Promise.all(exporters.map((exporter) => exporter.shutdown()));
  const records = batches.reduce((total, batch) => total + batch.length, 0);
  return {
    name: 'OTLP/gRPC, SDK exporter',
    records,
    batchSize,
    concurrency,
    recordsPerSecond: Math.round(records / seconds),
    ackP50Ms: percentile(latencies, 50),
    ackP99Ms: percentile(latencies, 99),
    hubRssMiB: Math.max(maxRss, await hub.rssMiB()),
  };
}
