// `npm run bench [-- --only ingest|ingest-many|scale-out|arg|reports-s|reports-l|ingest-core|refresh-replay|decode] [--against <checkout>]`: runs the benchmarks on
// this machine against an embedded PostgreSQL, prints a table and (for a full run) writes
// bench/results.md.
import { writeFile } from 'node:fs/promises';
import { sql } from 'kysely';
import { createLogger } from '../src/log/logger.ts';
import { connectDatabase } from '../src/store/connect.ts';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { type BenchHub, type BenchServer, HUB_NODE_ARGS, startBenchHub, startBenchServer, THIS_CHECKOUT } from './bench-hub.ts';
import { machineLine, markdownTable, progress } from './bench-report.ts';
import { benchDecodeNormalize } from './decode-normalize.ts';
import { benchDeliveryRefresh } from './delivery-refresh.ts';
import { benchRefreshReplay } from './refresh-replay.ts';
import { FLEET_L, FLEET_S, type FleetSize, generateFleet } from './fleet.ts';
import { assignDesiredState, benchIngestRawGrpc, workloadRecords } from './ingest-raw-grpc.ts';
import { benchIngestSdkGrpc, type IngestResult } from './ingest-sdk-grpc.ts';
import { benchCopyBaseline, storedRows } from './ingest-copy.ts';
import { benchArgPoll } from './arg-poll-runner.ts';
import { benchGrafanaPanels } from './grafana-panels.ts';
import { benchReports, benchRolloutGate } from './reports.ts';
import { benchUiPages } from './ui-pages.ts';

const SECTIONS = ['ingest', 'ingest-many', 'scale-out', 'arg', 'reports-s', 'reports-l'] as const;
/** Asked for by name only: short loops for trying a change to the write path or the refreshes. */
const ON_REQUEST = ['ingest-core', 'refresh-replay', 'decode'] as const;
// --against <checkout>: ingest-core runs this checkout's hub and that one's (another worktree of
// the repository, with its node_modules), alternating run by run, so that a change is measured
// against the code before it under the same moments of this shared machine's noise; decode loads
// both checkouts' decoders into one process and alternates pass by pass.
const { only, against, pairs } = parseArgs({ options: { only: { type: 'string' }, against: { type: 'string' }, pairs: { type: 'string' } } }).values;
if (against !== undefined && only !== 'ingest-core' && only !== 'decode') throw new Error('--against goes with --only ingest-core or --only decode');
if (only !== undefined && ![...SECTIONS, ...ON_REQUEST].includes(only as never)) {
  throw new Error(`--only must be one of ${[...SECTIONS, ...ON_REQUEST].join(', ')}`);
}
const runs = (section: (typeof SECTIONS)[number] | (typeof ON_REQUEST)[number]) =>
  only === section || (only === undefined && (SECTIONS as readonly string[]).includes(section));

/** Each ingest run: 2,000 new hosts × 12 reconcilers × 5 rounds. */
const INGEST_WORKLOAD = { hosts: 2_000, reconcilersPerHost: 12, rounds: 5, kind: 'transitions' } as const;

const ingestRow = (result: IngestResult, hubs = 1) => [
  result.name, hubs, result.records, result.batchSize, result.concurrency, result.recordsPerSecond, result.ackP50Ms, result.ackP99Ms,
  result.ackP99KnownMs ?? '–', result.hubRssMiB,
  result.cpu?.hubUs ?? '–', result.cpu?.postgresUs ?? '–',
];
const INGEST_HEADER = [
  'path', 'hubs', 'records', 'batch', 'clients', 'records/s committed', 'ack p50 ms', 'ack p99 ms', 'ack p99 ms, known reconcilers', 'hub RSS MiB (max)',
  'hub CPU µs/record', 'PostgreSQL CPU µs/record',
];
/** The columns ingestRun adds after INGEST_HEADER's: the COPY baseline (ingest-copy.ts) and the ratio. */
const COPY_HEADER = ['COPY rows/s (median of 3 loads)', 'hub/COPY'];

async function withHubs<T>(url: string, count: number, body: (hubs: BenchHub[]) => Promise<T>, flags: readonly string[] = []): Promise<T> {
  const hubs: BenchHub[] = [];
  try {
    for (let i = 0; i < count; i += 1) hubs.push(await startBenchHub(url, flags));
    return await body(hubs);
  } finally {
    await Promise.all(hubs.map((hub) => hub.stop()));
  }
}

/** Turns the triggers that queue summary refreshes (schema/0012) off or on. */
async function setSummaryTriggers(url: string, action: 'DISABLE' | 'ENABLE'): Promise<void> {
  const database = connectDatabase({ url, poolSize: 1, connectTimeoutMs: 5_000, applicationName: 'bench' }, createLogger('silent'));
  try {
    for (const trigger of ['insert', 'update', 'delete']) {
      await sql`ALTER TABLE deployment_state ${sql.raw(action)} TRIGGER ${sql.raw(`deployment_state_summaries_${trigger}`)}`.execute(database.db);
    }
  } finally {
    await database.close();
  }
}

/** One measured ingest run: the hub's rate, each record stored exactly once, and COPY of the same rows. */
async function ingestRun(
  url: string,
  hubs: readonly BenchHub[],
  runId: number,
  options: { batchSize: number; clients: number; gzip?: boolean; name?: string },
): Promise<(string | number)[]> {
  const records = (await workloadRecords({ ...INGEST_WORKLOAD, runId })).flat();
  await assignDesiredState(hubs, { ...INGEST_WORKLOAD, runId });
  // The first round creates every host and reconciler; the rest report known ones.
  const firstContacts = INGEST_WORKLOAD.hosts * INGEST_WORKLOAD.reconcilersPerHost;
  const result = await benchIngestRawGrpc(hubs, records, { ...options, firstContacts });
  const hosts = `bench-${runId}-host-`;
  const stored = await storedRows(url, hosts);
  if (stored !== records.length) throw new Error(`${result.name}: ${records.length} records acknowledged, ${stored} history rows stored`);
  const copy = await benchCopyBaseline(url, hosts);
  progress(
    `ingest ${result.name} ${options.batchSize}×${options.clients}: ${result.recordsPerSecond} records/s, COPY ${copy.rowsPerSecond} rows/s (loads: ${copy.loads.join(', ')}), ` +
      `CPU µs/record hub ${result.cpu?.hubUs} PostgreSQL ${result.cpu?.postgresUs}`,
  );
  return [...ingestRow(result, hubs.length), copy.rowsPerSecond, (result.recordsPerSecond / copy.rowsPerSecond).toFixed(2)];
}

async function ingestSection(server: BenchServer): Promise<string[]> {
  const { url, database } = await server.createDatabase('bench_ingest');
  await database.close();
  let runId = 0;
  const rows: (string | number)[][] = [];
  await withHubs(url, 1, async ([hub]) => {
    for (const { batchSize, clients } of [{ batchSize: 100, clients: 8 }, { batchSize: 1_000, clients: 4 }, { batchSize: 5_000, clients: 2 }]) {
      rows.push(await ingestRun(url, [hub!], (runId += 1), { batchSize, clients }));
    }
    // The OpenTelemetry Collector's default batch (send_batch_size 8,192), four collectors replaying at once.
    rows.push(await ingestRun(url, [hub!], (runId += 1), { batchSize: 8_192, clients: 4, name: 'OTLP/gRPC, raw, the Collector\'s default batch' }));
    rows.push(await ingestRun(url, [hub!], (runId += 1), { batchSize: 1_000, clients: 4, gzip: true, name: 'OTLP/gRPC, raw, gzip' }));
    // The cost of keeping the report summaries on write (issue 20): the same load with the queueing
    // triggers off and on, alternating, in the same run.
    for (const round of [1, 2]) {
      for (const triggers of ['DISABLE', 'ENABLE'] as const) {
        await setSummaryTriggers(url, triggers);
        const name = `OTLP/gRPC, raw, summary triggers ${triggers === 'DISABLE' ? 'off (as before issue 20)' : 'on'}, round ${round}`;
        rows.push(await ingestRun(url, [hub!], (runId += 1), { batchSize: 1_000, clients: 4, name }));
      }
    }
    runId += 1;
    await assignDesiredState([hub!], { ...INGEST_WORKLOAD, runId });
    const sdk = await benchIngestSdkGrpc(hub!, (await workloadRecords({ ...INGEST_WORKLOAD, runId })).flat(), { batchSize: 1_000, concurrency: 4 });
    rows.push([...ingestRow(sdk), '–', '–']);
    // A settled fleet: the first round creates the reconcilers (not timed), the next four confirm.
    runId += 1;
    const [first, ...confirmations] = await workloadRecords({ ...INGEST_WORKLOAD, kind: 'heartbeats', runId });
    await assignDesiredState([hub!], { ...INGEST_WORKLOAD, kind: 'heartbeats', runId });
    await benchIngestRawGrpc([hub!], first!, { batchSize: 1_000, clients: 4 });
    const heartbeats = await benchIngestRawGrpc([hub!], confirmations.flat(), { batchSize: 1_000, clients: 4, name: 'OTLP/gRPC, raw, heartbeats (no transition)' });
    rows.push([...ingestRow(heartbeats), '–', '–']);
  });
  // Two hub processes on the same database, clients spread round-robin.
  await withHubs(url, 2, async (hubs) => {
    rows.push(await ingestRun(url, hubs, (runId += 1), { batchSize: 1_000, clients: 4, name: 'OTLP/gRPC, raw, two hubs' }));
  });
  return [
    `## Ingest (OTLP/gRPC; each run ${INGEST_WORKLOAD.hosts} new hosts × ${INGEST_WORKLOAD.reconcilersPerHost} reconcilers × ${INGEST_WORKLOAD.rounds} rounds; every record a state transition unless marked heartbeats; each run checked: every record stored exactly once)`,
    '',
    'COPY: the same run\'s history rows loaded as `psql \\copy` loads them (text, one stream) into a clone of the history table with its indexes.',
    '',
    markdownTable([...INGEST_HEADER, ...COPY_HEADER], rows),
    '',
  ];
}

/** The 1,000 × 4 run three times on one hub: the figure issue 21's goal is stated in, and its spread. */
async function ingestCoreSection(server: BenchServer): Promise<string[]> {
  if (against !== undefined) return await ingestAgainstSection(server, path.resolve(against), Number(pairs ?? 4));
  const { url, database } = await server.createDatabase('bench_ingest_core');
  await database.close();
  const rows: (string | number)[][] = [];
  await withHubs(url, 1, async ([hub]) => {
    for (const runId of [1, 2, 3]) rows.push(await ingestRun(url, [hub!], runId, { batchSize: 1_000, clients: 4, name: `OTLP/gRPC, raw, run ${runId}` }));
  });
  return ['## Ingest 1,000 × 4, three runs', '', markdownTable([...INGEST_HEADER, ...COPY_HEADER], rows), ''];
}

/**
 * The 1,000 × 4 run on this checkout's hub and on another's, each on its own database of the same
 * server, in pairs whose order alternates (this, other; other, this; …). The other hub migrates its
 * database itself, so the two may differ in schema.
 */
async function ingestAgainstSection(server: BenchServer, other: string, pairCount: number): Promise<string[]> {
  const sides = [
    { name: 'this checkout', checkout: THIS_CHECKOUT, url: (await server.createDatabase('bench_ingest_this')).url },
    { name: path.basename(other), checkout: other, url: await server.createEmptyDatabase('bench_ingest_other') },
  ];
  const hubs = await Promise.all(sides.map((side) => startBenchHub(side.url, [], HUB_NODE_ARGS, side.checkout)));
  const rows: (string | number)[][] = [];
  const rates: [number[], number[]] = [[], []];
  try {
    let runId = 0;
    for (let pair = 0; pair < pairCount; pair += 1) {
      for (const index of pair % 2 === 0 ? [0, 1] : [1, 0]) {
        runId += 1;
        const side = sides[index]!;
        const row = await ingestRun(side.url, [hubs[index]!], runId, { batchSize: 1_000, clients: 4, name: `${side.name}, pair ${pair + 1}` });
        rates[index as 0 | 1].push(Number(row[5]));
        rows.push(row);
      }
    }
  } finally {
    await Promise.all(hubs.map((hub) => hub.stop()));
  }
  const differences = rates[0].map((rate, pair) => rate - rates[1][pair]!);
  const mean = (values: readonly number[]) => Math.round(values.reduce((sum, value) => sum + value, 0) / values.length);
  return [
    `## Ingest 1,000 × 4, this checkout against ${other}, ${pairCount} pairs`,
    '',
    markdownTable([...INGEST_HEADER, ...COPY_HEADER], rows),
    '',
    `Records/s, this checkout minus the other, pair by pair: ${differences.join(', ')} (mean ${mean(differences)}; means ${mean(rates[0])} and ${mean(rates[1])}).`,
    '',
  ];
}

/** Many collectors sending small batches at once: more exports in flight than the hub writes at once. */
async function ingestManySection(server: BenchServer): Promise<string[]> {
  const { url, database } = await server.createDatabase('bench_ingest_many');
  await database.close();
  const rows: (string | number)[][] = [];
  await withHubs(url, 1, async ([hub]) => {
    for (const [runId, clients] of [[1, 32], [2, 64]] as const) {
      rows.push(await ingestRun(url, [hub!], runId, { batchSize: 100, clients, name: `OTLP/gRPC, raw, ${clients} clients` }));
    }
  });
  return ['## Ingest from many collectors (batches of 100)', '', markdownTable([...INGEST_HEADER, ...COPY_HEADER], rows), ''];
}

async function scaleOutSection(server: BenchServer): Promise<string[]> {
  const { url, database } = await server.createDatabase('bench_scale_out');
  await database.close();
  const rows: (string | number)[][] = [];
  for (const [runId, hubCount] of [[1, 1], [2, 2]] as const) {
    const records = (await workloadRecords({ ...INGEST_WORKLOAD, runId })).flat();
    await withHubs(url, hubCount, async (hubs) => {
      await assignDesiredState(hubs, { ...INGEST_WORKLOAD, runId });
      const result = await benchIngestRawGrpc(hubs, records, { batchSize: 1_000, clients: 4 });
      rows.push(ingestRow(result, hubCount));
      progress(`scale-out ${hubCount} hub(s): ${result.recordsPerSecond} records/s`);
    });
  }
  return ['## Scale-out: one hub process vs two against one PostgreSQL (clients spread round-robin)', '', markdownTable(INGEST_HEADER, rows), ''];
}

async function argSection(server: BenchServer): Promise<string[]> {
  const { url, database } = await server.createDatabase('bench_arg');
  await database.close();
  const results = await benchArgPoll(url);
  return [
    '## Azure Resource Graph poll (5,000 flux configurations × 4 Kustomizations, 1,000-row pages, HTTPS stand-in)',
    '',
    markdownTable(
      ['poll', 'configurations', 'reconcilers written', 'seconds', 'configurations/s', 'query pages', 'token requests'],
      results.map((row) => [row.run, row.configurations, row.reconcilers, row.seconds, Math.round(row.configurations / row.seconds), row.pages, row.tokenRequests]),
    ),
    '',
  ];
}

/** Which Grafana dashboards' panels to time: all of them, or at fleet L only Delivery's (issue 20). */
async function reportsSection(server: BenchServer, size: FleetSize, panels: readonly string[] | 'all'): Promise<string[]> {
  const { url, database } = await server.createDatabase(`bench_fleet_${size.name.toLowerCase()}`);
  const generated = Date.now();
  await generateFleet(database.db, size, new Date());
  const seconds = ((Date.now() - generated) / 1_000).toFixed(1);
  await database.close();
  const environment = size.environments[size.environments.length - 1]!;
  // The generated fleet's reconcilers all reported last at its generation: with the default
  // stale-after (15 minutes) the whole fleet turned stale at once in the middle of a fleet-L run, and
  // whatever ran then waited for that refresh (20 s at L) — a fleet gone silent, not the one measured.
  const { latencies, pages, refresh } = await withHubs(
    url,
    1,
    async ([hub]) => ({
      latencies: [...(await benchReports(hub!.baseUrl, size)), await benchRolloutGate(hub!.baseUrl, size), await benchRolloutGate(hub!.baseUrl, size, 300, 1)],
      pages: await benchUiPages(hub!.baseUrl, size),
      // After the reports: it changes the fleet.
      refresh: await benchDeliveryRefresh(url, hub!, environment, Math.ceil(size.transitionsPerReconciler / 4)),
    }),
    ['--stale-after', '3h'],
  );
  const hosts = size.hosts.toLocaleString('en');
  const reconcilers = (size.hosts * size.reconcilersPerHost).toLocaleString('en');
  const history = (size.hosts * size.reconcilersPerHost * size.transitionsPerReconciler).toLocaleString('en');
  const lines = [
    `## Reports, fleet ${size.name} (${hosts} hosts, ${reconcilers} reconcilers, ${history} history rows; generated in ${seconds} s)`,
    '',
    markdownTable(['endpoint', 'cold ms', 'p50 ms', 'p95 ms', 'response bytes'], latencies.map((row) => [row.endpoint, row.coldMs, row.p50Ms, row.p95Ms, row.bytes])),
    '',
    `## Web UI time to content, fleet ${size.name} (headless Chromium at 1440 × 900, the same machine as the hub; navigation start until the data is drawn; cold = a new tab, then 10 times)`,
    '',
    markdownTable(['page', 'cold ms', 'p50 ms', 'p95 ms'], pages.map((row) => [row.page, row.coldMs, row.p50Ms, row.p95Ms])),
    '',
    `## Delivery analytics under ingest, fleet ${size.name} (a new version for every target of ${environment}; its reconcilers report it in progress, then succeeded; raw gRPC, batch 1,000, 4 clients; the hub's timers alone fold the queues in, as Grafana sees them)`,
    '',
    markdownTable(
      [
        'new rollouts',
        'records',
        'records/s committed',
        'summaries: a write waits p50 / p95 / max (ms)',
        'summaries current after last ack (ms)',
        'rollouts: oldest queued p50 / p95 / max (ms)',
        'rollouts current after last ack (ms)',
        'summary refreshes, mean ms',
        'summary refresh µs per record',
        'rollout refreshes, mean ms',
        'rollout changes',
        'new rollouts converged',
      ],
      [
        [
          refresh.rollouts,
          refresh.records,
          refresh.recordsPerSecond,
          `${refresh.lag.summaryLagMs.p50} / ${refresh.lag.summaryLagMs.p95} / ${refresh.lag.summaryLagMs.max}`,
          refresh.summariesCurrentAfterMs,
          `${refresh.lag.rolloutLagMs.p50} / ${refresh.lag.rolloutLagMs.p95} / ${refresh.lag.rolloutLagMs.max}`,
          refresh.currentAfterMs,
          `${refresh.summaryRefreshes}, ${refresh.summaryRefreshMeanMs}`,
          refresh.summaryMicrosPerRecord,
          `${refresh.refreshes}, ${refresh.refreshMeanMs}`,
          refresh.rolloutsChanged,
          refresh.converged,
        ],
      ],
    ),
    '',
  ];
  // The hub published its settings on start; the views read them.
  const timed = await benchGrafanaPanels(url, 10, panels === 'all' ? undefined : panels);
  lines.push(
    `## Grafana panel queries, fleet ${size.name} (${panels === 'all' ? 'every dashboard' : panels.join(', ')}; variables at All, as kalypso_reader)`,
    '',
    markdownTable(['dashboard / panel', 'rows', 'p50 ms', 'p95 ms'], timed.map((row) => [row.panel, row.rows, row.p50Ms, row.p95Ms])),
    '',
  );
  return lines;
}

/** The ingest database's statements by total time (pg_stat_statements). */
async function statementsSection(server: BenchServer, ofDatabase: string): Promise<string[]> {
  const { url, database } = await server.createDatabase('bench_statements');
  await database.close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    // Planning per call, not per plan: a statement a function or trigger runs keeps its plan for
    // the session, so it may be planned far fewer times than it is called.
    const { rows } = await client.query<{ query: string; calls: string; plans: string; rows: string; total_ms: number; mean_ms: number; plan_ms: number }>(`
      SELECT regexp_replace(left(query, 90), '\\s+', ' ', 'g') AS query, calls, plans, rows,
             round(total_exec_time)::float8 AS total_ms, round(mean_exec_time::numeric, 2)::float8 AS mean_ms,
             round((total_plan_time / nullif(calls, 0))::numeric, 2)::float8 AS plan_ms
        FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
       WHERE d.datname = $1
       ORDER BY total_exec_time DESC LIMIT 25`, [ofDatabase]);
    return [
      '## Ingest database statements (pg_stat_statements, every run above)',
      '',
      markdownTable(
        ['statement', 'calls', 'plans', 'rows', 'total ms', 'mean ms', 'planning ms per call'],
        rows.map((row) => [row.query.replace(/\|/g, '/'), row.calls, row.plans, row.rows, row.total_ms, row.mean_ms, row.plan_ms]),
      ),
      '',
    ];
  } finally {
    await client.end();
  }
}

/** The refreshes' calls under a replay through the writer (refresh-replay.ts). */
async function refreshReplaySection(server: BenchServer): Promise<string[]> {
  const { database } = await server.createDatabase('bench_refresh_replay');
  try {
    const result = await benchRefreshReplay(database, INGEST_WORKLOAD);
    const row = (name: string, t: typeof result.rollouts) => [name, t.calls, t.p50Ms, t.maxMs, t.totalMs];
    return [
      `## Refreshes under a replay (${result.records.toLocaleString('en')} records through the writer, a refresh after every 20 batches)`,
      '',
      markdownTable(['refresh', 'calls', 'p50 ms', 'max ms', 'total ms'], [row('rollouts', result.rollouts), row('summaries', result.summaries)]),
      '',
    ];
  } finally {
    await database.close();
  }
}

/** Decoding and normalizing in process (decode-normalize.ts): the hub's part before the store. */
async function decodeSection(other: string | undefined): Promise<string[]> {
  const results = await benchDecodeNormalize(other === undefined ? [THIS_CHECKOUT] : [THIS_CHECKOUT, path.resolve(other)]);
  return [
    `## Decode and normalize, in process (120,000 records in requests of 1,000; best of 12 passes${other === undefined ? '' : ', alternating between the checkouts'})`,
    '',
    markdownTable(
      ['checkout', 'encoding', 'bytes/record', 'decode µs/record', 'decode + normalize µs/record'],
      results.map((result) => [result.checkout, result.encoding, result.bytesPerRecord, result.decodeUs.toFixed(2), result.decodeNormalizeUs.toFixed(2)]),
    ),
    '',
  ];
}

const sections: string[] = [];
// Before PostgreSQL starts: nothing else of the bench's runs on the machine meanwhile.
if (runs('decode')) sections.push(...(await decodeSection(against)));
progress('starting PostgreSQL');
// KALYPSO_BENCH_PG_STATEMENTS=1: the database's side of the ingest runs, statement by statement
// (nested ones too: a function's statements are listed beside the call that ran them).
const statements = process.env['KALYPSO_BENCH_PG_STATEMENTS'] === '1';
// KALYPSO_BENCH_PG_SETTINGS='{"name": "value", …}': more server settings, e.g. auto_explain's, to
// see the plans of a run's slow statements (a log_directory must be writable by the postgres user).
const extraSettings = JSON.parse(process.env['KALYPSO_BENCH_PG_SETTINGS'] ?? '{}') as Record<string, string>;
const server = await startBenchServer({
  ...(statements ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all', 'pg_stat_statements.track_planning': 'on' } : {}),
  ...extraSettings,
});
try {
  if (runs('ingest')) sections.push(...(await ingestSection(server)));
  if (runs('ingest') && statements) sections.push(...(await statementsSection(server, 'bench_ingest')));
  if (runs('ingest-core')) sections.push(...(await ingestCoreSection(server)));
  if (runs('ingest-core') && statements) sections.push(...(await statementsSection(server, 'bench_ingest_core')));
  if (runs('refresh-replay')) sections.push(...(await refreshReplaySection(server)));
  if (runs('ingest-many')) sections.push(...(await ingestManySection(server)));
  if (runs('scale-out')) sections.push(...(await scaleOutSection(server)));
  if (runs('arg')) sections.push(...(await argSection(server)));
  if (runs('reports-s')) sections.push(...(await reportsSection(server, FLEET_S, 'all')));
  if (runs('reports-l')) sections.push(...(await reportsSection(server, FLEET_L, 'all')));
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
