// `npm run bench`: runs the benchmarks on this machine, prints a table and writes bench/results.md.
import { writeFile } from 'node:fs/promises';
import { startBenchHub } from './bench-hub.ts';
import { machineLine, markdownTable, progress } from './bench-report.ts';
import { benchIngestSdkGrpc } from './ingest-sdk-grpc.ts';

progress('starting PostgreSQL and the hub');
const hub = await startBenchHub();
try {
  const ingest = await benchIngestSdkGrpc(hub, { hosts: 2_000, reconcilersPerHost: 12, rounds: 5, batchSize: 1_000, concurrency: 4 });
  const report = [
    `# Benchmark results`,
    '',
    `Machine: ${machineLine()}. PostgreSQL: embedded, default settings (fsync on). Run: ${new Date().toISOString()}.`,
    '',
    '## Ingest',
    '',
    markdownTable(
      ['path', 'records', 'batch', 'exports in flight', 'records/s committed', 'ack p50 ms', 'ack p99 ms', 'hub RSS MiB'],
      [[ingest.name, ingest.records, ingest.batchSize, ingest.concurrency, ingest.recordsPerSecond, ingest.ackP50Ms, ingest.ackP99Ms, ingest.hubRssMiB]],
    ),
    '',
  ].join('\n');
  await writeFile(new URL('./results.md', import.meta.url), report);
  process.stdout.write(`${report}\n`);
} finally {
  await hub.stop();
}
