// `npm run bench [-- --only ingest|arg|reports]`: runs the benchmarks on this machine, prints a
// table and writes bench/results.md.
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { startBenchHub, startBenchServer } from './bench-hub.ts';
import { machineLine, markdownTable, progress } from './bench-report.ts';
import { FLEET_S, generateFleet } from './fleet.ts';
import { benchIngestSdkGrpc } from './ingest-sdk-grpc.ts';
import { benchArgPoll } from './arg-poll-runner.ts';
import { benchGrafanaPanels } from './grafana-panels.ts';
import { benchReports } from './reports.ts';

const { only } = parseArgs({ options: { only: { type: 'string' } } }).values;
const runs = (part: string) => only === undefined || only === part;
const sections: string[] = [];

progress('starting PostgreSQL');
const server = await startBenchServer();
try {
  if (runs('ingest')) {
    const { url, database } = await server.createDatabase('bench_ingest');
    await database.close();
    const hub = await startBenchHub(url);
    try {
      const ingest = await benchIngestSdkGrpc(hub, { hosts: 2_000, reconcilersPerHost: 12, rounds: 5, batchSize: 1_000, concurrency: 4 });
      sections.push(
        '## Ingest',
        '',
        markdownTable(
          ['path', 'records', 'batch', 'exports in flight', 'records/s committed', 'ack p50 ms', 'ack p99 ms', 'hub RSS MiB'],
          [[ingest.name, ingest.records, ingest.batchSize, ingest.concurrency, ingest.recordsPerSecond, ingest.ackP50Ms, ingest.ackP99Ms, ingest.hubRssMiB]],
        ),
        '',
      );
    } finally {
      await hub.stop();
    }
  }

  if (runs('arg')) {
    const { url, database } = await server.createDatabase('bench_arg');
    await database.close();
    const results = await benchArgPoll(url);
    sections.push(
      '## Azure Resource Graph poll (5,000 flux configurations × 4 Kustomizations, 1,000-row pages, HTTPS stand-in)',
      '',
      markdownTable(
        ['poll', 'configurations', 'reconcilers written', 'seconds', 'query pages', 'token requests'],
        results.map((row) => [row.run, row.configurations, row.reconcilers, row.seconds, row.pages, row.tokenRequests]),
      ),
      '',
    );
  }

  if (runs('reports')) {
    const { url, database } = await server.createDatabase('bench_fleet_s');
    const generated = Date.now();
    await generateFleet(database.db, FLEET_S, new Date());
    const seconds = ((Date.now() - generated) / 1_000).toFixed(1);
    await database.close();
    const hub = await startBenchHub(url);
    try {
      const latencies = await benchReports(hub.baseUrl, FLEET_S);
      sections.push(
        `## Reports, fleet S (2,000 hosts, 24,000 reconcilers, 480,000 history rows, 1,200 targets in 3 environments; generated in ${seconds} s)`,
        '',
        markdownTable(
          ['endpoint', 'cold ms', 'p50 ms', 'p95 ms', 'response bytes'],
          latencies.map((row) => [row.endpoint, row.coldMs, row.p50Ms, row.p95Ms, row.bytes]),
        ),
        '',
      );
    } finally {
      await hub.stop();
    }
    // The hub published its settings on start; the views read them.
    const panels = await benchGrafanaPanels(url);
    sections.push(
      '## Grafana panel queries, fleet S (variables at All, as kalypso_reader)',
      '',
      markdownTable(
        ['dashboard / panel', 'rows', 'p50 ms', 'p95 ms'],
        panels.map((row) => [row.panel, row.rows, row.p50Ms, row.p95Ms]),
      ),
      '',
    );
  }
} finally {
  await server.stop();
}

const report = [
  '# Benchmark results',
  '',
  `Machine: ${machineLine()}. PostgreSQL: embedded, default settings (fsync on). Run: ${new Date().toISOString()}.`,
  '',
  ...sections,
].join('\n');
if (only === undefined) await writeFile(new URL('./results.md', import.meta.url), report);
process.stdout.write(`${report}\n`);
