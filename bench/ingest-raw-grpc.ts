// Ingest throughput with a raw gRPC load generator: requests are serialized before the clock
// starts, and several clients (one channel each) send them as fast as the hub acknowledges. This
// measures the hub, not the exporter: the SDK exporter spends client CPU serializing every batch,
// on the same two cores the hub and PostgreSQL use.
import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { protobufRequest } from '../test/support/raw-otlp.ts';
import { buildLogRecords } from '../test/support/otlp-client.ts';
import { descriptorLog, stateLog } from '../test/support/kalypso-logs.ts';
import type { BenchHub } from './bench-hub.ts';
import { percentile, progress } from './bench-report.ts';
import { cpuPerRecord, sampleCpu } from './process-cpu.ts';
import type { IngestResult } from './ingest-sdk-grpc.ts';

export interface IngestWorkload {
  /** Distinct hosts × reconcilers per host = reconcilers reported each round. */
  readonly hosts: number;
  readonly reconcilersPerHost: number;
  /** Each round reports every reconciler once. */
  readonly rounds: number;
  /**
   * transitions: every round a new commit, so every record is a state transition (the write
   * path's heaviest case). heartbeats: the same commit and status every round, as a settled
   * fleet reports; after the first round every record only confirms the current state.
   */
  readonly kind: 'transitions' | 'heartbeats';
  /** Offsets hosts and commits so that runs against one database do not repeat each other. */
  readonly runId: number;
}

const ENVIRONMENTS = 4;
const reportedTime = (workload: IngestWorkload) => Date.now() - (workload.rounds + 1) * 60_000;
// A commit id as git prints it: the hash of the run and round, so that ids do not sort in the
// order they were merged (the hub must never rely on that), yet each run repeats its own.
const roundCommit = (workload: IngestWorkload, round: number) =>
  createHash('sha1').update(`bench-${workload.runId}-${workload.kind === 'transitions' ? round : 0}`).digest('hex');
// Each run its own environment branches: the runs follow each other within minutes, each with
// its timeline of assignments, and on shared targets a run's assignments would land between the
// previous run's — out of order, as no CD pipeline assigns.
const endpointOf = (workload: IngestWorkload, environment: number, reconciler: number) => ({
  repo: 'https://github.com/contoso/gitops',
  branch: `run-${workload.runId}-env-${environment}`,
  path: `workload-${reconciler}`,
});

/**
 * The desired state of the workload's fleet, as a CD pipeline would have assigned it by the time
 * the reports come in (a collector replaying what it queued): every endpoint is a deployment target,
 * each round's commit assigned half a minute before the round's reports, a new version every second
 * round. So drift is judged against real targets — reconcilers behind the newest assignment drift.
 */
export async function desiredStateRecords(workload: IngestWorkload): Promise<ReadableLogRecord[]> {
  const start = reportedTime(workload);
  const specs = [];
  for (let round = 0; round < workload.rounds; round += 1) {
    for (let e = 0; e < ENVIRONMENTS; e += 1) {
      for (let r = 0; r < workload.reconcilersPerHost; r += 1) {
        const endpoint = endpointOf(workload, e, r);
        specs.push(
          descriptorLog({
            environment: endpoint.branch,
            target: endpoint.path,
            repo: endpoint.repo,
            endpointBranch: endpoint.branch,
            path: endpoint.path,
            version: `1.0.${Math.floor(round / 2)}`,
            commit: roundCommit(workload, round),
            at: new Date(start + round * 60_000 - 30_000),
          }),
        );
      }
    }
  }
  return await buildLogRecords(specs);
}

/** The SDK records of a workload, round by round (built once, serialized per batch size). */
export async function workloadRecords(workload: IngestWorkload): Promise<ReadableLogRecord[][]> {
  // Reports observed just now, as a live fleet sends them: times days in the past made every
  // reconciler stale on arrival, so the summaries' work was that of a fleet gone silent.
  const start = reportedTime(workload);
  const rounds: ReadableLogRecord[][] = [];
  const transitions = workload.kind === 'transitions';
  for (let round = 0; round < workload.rounds; round += 1) {
    const specs = [];
    for (let h = 0; h < workload.hosts; h += 1) {
      for (let r = 0; r < workload.reconcilersPerHost; r += 1) {
        const endpoint = endpointOf(workload, h % ENVIRONMENTS, r);
        const commit = roundCommit(workload, round);
        const inProgress = transitions && round % 2 === 0;
        specs.push(
          stateLog({
            host: `bench-${workload.runId}-host-${h}`,
            reconciler: `flux-system/workload-${r}`,
            endpoint: Object.values(endpoint).join('/'),
            commit,
            status: inProgress ? 'in_progress' : 'success',
            // The messages of a Flux Kustomization's Ready condition (../shared/fixtures).
            message: inProgress ? 'Reconciliation in progress' : `Applied revision: ${endpoint.branch}@sha1:${commit}`,
            at: new Date(start + round * 60_000 + h),
          }),
        );
      }
    }
    rounds.push(await buildLogRecords(specs));
    progress(`ingest: built round ${round + 1}/${workload.rounds} (${specs.length} records)`);
  }
  return rounds;
}

/** Resolves when the summaries and rollouts have taken every write before it (each report folds them in first). */
async function refreshesDone(hub: BenchHub): Promise<void> {
  for (const path of ['/api/v1/environments', '/api/v1/metrics/delivery']) {
    const response = await fetch(`http://127.0.0.1:${hub.ports.http}${path}`);
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    await response.arrayBuffer();
  }
}

/**
 * Sends the workload's desired state (not timed) and waits until the hub has folded it into its
 * summaries — a report waits for that — so that the measured run pays for its own records only.
 */
export async function assignDesiredState(hubs: readonly BenchHub[], workload: IngestWorkload): Promise<void> {
  await benchIngestRawGrpc(hubs, await desiredStateRecords(workload), { batchSize: 1_000, clients: 1, name: 'desired state' });
  const response = await fetch(`http://127.0.0.1:${hubs[0]!.ports.http}/api/v1/environments`);
  if (!response.ok) throw new Error(`environments: HTTP ${response.status}`);
  const { items } = (await response.json()) as { items: { deploymentTargets: number }[] };
  const targets = items.reduce((sum, environment) => sum + environment.deploymentTargets, 0);
  if (targets < ENVIRONMENTS * workload.reconcilersPerHost) throw new Error(`desired state: ${targets} deployment targets, expected ${ENVIRONMENTS * workload.reconcilersPerHost}`);
}

/** Sends with `clients` channels spread round-robin over `hubs` (a collector's load balancing). */
export async function benchIngestRawGrpc(
  hubs: readonly BenchHub[],
  records: readonly ReadableLogRecord[],
  options: {
    batchSize: number;
    clients: number;
    gzip?: boolean;
    name?: string;
    /** The leading records that make the hub create their host and reconciler: their requests are timed apart. */
    firstContacts?: number;
    /**
     * false: return at the last acknowledgement, leaving what the records queued to the hub's timers
     * (CPU is then sampled without it). By default a report makes the hub fold it in first.
     */
    foldQueued?: boolean;
  },
): Promise<IngestResult> {
  const bodies: Buffer[] = [];
  for (let i = 0; i < records.length; i += options.batchSize) bodies.push(protobufRequest(records.slice(i, i + options.batchSize)));
  const clients = Array.from(
    { length: options.clients },
    (_, i) =>
      new grpc.Client(`127.0.0.1:${hubs[i % hubs.length]!.ports.otlpGrpc}`, grpc.credentials.createInsecure(), {
        'grpc.max_send_message_length': 256 * 1024 * 1024,
        // As a collector's `compression: gzip` (grpc-js: 2 = gzip); the client compresses each request.
        ...(options.gzip === true ? { 'grpc.default_compression_algorithm': 2 } : {}),
      }),
  );
  const exportOnce = (client: grpc.Client, body: Buffer) =>
    new Promise<void>((resolve, reject) => {
      client.makeUnaryRequest(
        '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
        (value: Buffer) => value,
        (value: Buffer) => value,
        body,
        (error) => (error === null ? resolve() : reject(error)),
      );
    });
  const latencies: number[] = [];
  // Requests whose records the hub has seen before: a replay of a known fleet is made of these.
  const knownLatencies: number[] = [];
  const firstKnownRequest = Math.ceil((options.firstContacts ?? 0) / options.batchSize);
  let next = 0;
  const hubsRss = async () => Math.max(...(await Promise.all(hubs.map((hub) => hub.rssMiB()))));
  let maxRss = await hubsRss();
  const rssTimer = setInterval(() => {
    void hubsRss().then((rss) => (maxRss = Math.max(maxRss, rss)));
  }, 250);
  const cpuBefore = await sampleCpu(hubs.map((hub) => hub.pid));
  const began = performance.now();
  try {
    await Promise.all(
      clients.map(async (client) => {
        while (next < bodies.length) {
          const index = next++;
          const body = bodies[index]!;
          const sent = performance.now();
          // A hub that sheds load says UNAVAILABLE: a collector would retry, and so does this.
          for (;;) {
            try {
              await exportOnce(client, body);
              break;
            } catch (error) {
              if ((error as grpc.ServiceError).code !== grpc.status.UNAVAILABLE) throw error;
              await new Promise((resolve) => setTimeout(resolve, 50));
            }
          }
          latencies.push(performance.now() - sent);
          if (index >= firstKnownRequest) knownLatencies.push(latencies.at(-1)!);
          if (latencies.length % Math.max(1, Math.round(bodies.length / 10)) === 0) progress(`ingest ${options.batchSize}×${options.clients}: ${latencies.length}/${bodies.length} requests`);
        }
      }),
    );
  } finally {
    clearInterval(rssTimer);
    for (const client of clients) client.close();
  }
  const seconds = (performance.now() - began) / 1_000;
  // The work the records left queued (summaries, rollouts) is theirs too: CPU is sampled once the
  // hub has done it, which a report makes it do before it answers.
  if (options.foldQueued !== false) await refreshesDone(hubs[0]!);
  const cpu = cpuPerRecord(cpuBefore, await sampleCpu(hubs.map((hub) => hub.pid)), records.length);
  return {
    name: options.name ?? 'OTLP/gRPC, raw load generator',
    records: records.length,
    batchSize: options.batchSize,
    concurrency: options.clients,
    recordsPerSecond: Math.round(records.length / seconds),
    ackP50Ms: percentile(latencies, 50),
    ackP99Ms: percentile(latencies, 99),
    ...(options.firstContacts === undefined ? {} : { ackP99KnownMs: percentile(knownLatencies, 99) }),
    hubRssMiB: Math.max(maxRss, await hubsRss()),
    cpu,
  };
}
