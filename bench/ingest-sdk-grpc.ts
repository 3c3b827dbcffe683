// Ingest throughput through the official SDK gRPC log exporter: the exporter serializes every
// batch itself (client CPU on the same two cores as the hub and PostgreSQL), a few exports in
// flight at once, each counted as committed when the hub acknowledges it.
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { createExporter, ExportResultCode, exportLogs } from '../test/support/otlp-client.ts';
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
  /** ack p99 of the requests after the first contacts (`firstContacts`): reconcilers the hub knows. */
  readonly ackP99KnownMs?: number;
  readonly hubRssMiB: number;
  /** CPU µs per record of the hubs and of PostgreSQL (raw gRPC runs only). */
  readonly cpu?: { readonly hubUs: number; readonly postgresUs: number };
  /** ms from the last acknowledgement until everything derived (projection, summaries, rollouts) was current (raw gRPC runs only). */
  readonly catchUpMs?: number;
}

export async function benchIngestSdkGrpc(
  hub: BenchHub,
  records: readonly ReadableLogRecord[],
  options: { batchSize: number; concurrency: number },
): Promise<IngestResult> {
  const { batchSize, concurrency } = options;
  const batches: ReadableLogRecord[][] = [];
  for (let i = 0; i < records.length; i += batchSize) batches.push(records.slice(i, i + batchSize));
  const exporters = Array.from({ length: concurrency }, () => createExporter('grpc', hub.ports));
  const latencies: number[] = [];
  let next = 0;
  let maxRss = await hub.rssMiB();
  const rssTimer = setInterval(() => {
    void hub.rssMiB().then((rss) => (maxRss = Math.max(maxRss, rss)));
  }, 250);
  const began = performance.now();
  try {
    await Promise.all(
      exporters.map(async (exporter) => {
        while (next < batches.length) {
          const batch = batches[next++]!;
          const sent = performance.now();
          const result = await exportLogs(exporter, batch);
          if (result.code !== ExportResultCode.SUCCESS) throw new Error(`export failed: ${String(result.error)}`);
          latencies.push(performance.now() - sent);
          if (latencies.length % Math.max(1, Math.round(batches.length / 10)) === 0) progress(`ingest SDK ${batchSize}×${concurrency}: ${latencies.length}/${batches.length} batches`);
        }
      }),
    );
  } finally {
    clearInterval(rssTimer);
  }
  const seconds = (performance.now() - began) / 1_000;
  await Promise.all(exporters.map((exporter) => exporter.shutdown()));
  return {
    name: 'OTLP/gRPC, SDK exporter',
    records: records.length,
    batchSize,
    concurrency,
    recordsPerSecond: Math.round(records.length / seconds),
    ackP50Ms: percentile(latencies, 50),
    ackP99Ms: percentile(latencies, 99),
    hubRssMiB: Math.max(maxRss, await hub.rssMiB()),
  };
}
