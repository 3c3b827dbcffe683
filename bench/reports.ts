// Report latency through the HTTP API on a generated fleet: p50/p95 per endpoint, cold (first
// request after start) and warm (repeated requests).
import { fleetEndpoint, type FleetSize, versionCommit } from './fleet.ts';
import { percentile, progress } from './bench-report.ts';

export interface ReportLatency {
  readonly endpoint: string;
  readonly coldMs: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly bytes: number;
}

export function reportRequests(size: FleetSize): { name: string; path: string }[] {
  const environment = size.environments[size.environments.length - 1]!;
  const versions = Math.ceil(size.transitionsPerReconciler / 4);
  return [
    { name: 'environments', path: '/api/v1/environments' },
    { name: 'environment state', path: `/api/v1/environments/${environment}/state` },
    { name: 'hosts (first page, 200)', path: '/api/v1/hosts' },
    { name: 'hosts (page of 1,000)', path: '/api/v1/hosts?limit=1000' },
    { name: 'hosts of an environment, failing', path: `/api/v1/hosts?environment=${environment}&status=failure` },
    { name: 'host state', path: '/api/v1/hosts/host-00042/state' },
    { name: 'history (newest 100)', path: '/api/v1/history' },
    { name: 'history of an environment', path: `/api/v1/history?environment=${environment}` },
    { name: 'history of a workload', path: `/api/v1/history?workload=w7&environment=${environment}` },
    { name: 'history of a host', path: '/api/v1/history?host=host-00042' },
    { name: 'compare all environments (first 200 rows)', path: `/api/v1/compare?environments=${size.environments.join(',')}` },
    { name: 'drift of an environment', path: `/api/v1/drift?environment=${environment}` },
    { name: 'delivery metrics (whole fleet, 30 days)', path: '/api/v1/metrics/delivery' },
    { name: 'delivery metrics of an environment', path: `/api/v1/metrics/delivery?environment=${environment}` },
    { name: 'delivery metrics of a workload', path: `/api/v1/metrics/delivery?workload=w7&environment=${environment}` },
    { name: 'delivery metrics of a host', path: '/api/v1/metrics/delivery?host=host-00042' },
    {
      name: 'rollout gate',
      path: `/api/v1/deployment-state?manifestsEndpoint=${encodeURIComponent(fleetEndpoint(environment, 7, 1))}&commit=${versionCommit(versions - 1)}`,
    },
    // Check Promote of the whole environment (issue 38): its default answer, a page of 200 (what the
    // UI asked for until its pages became 100; kept, to compare with earlier runs), and the UI's page.
    { name: `environment gate of ${environment} (default page)`, path: `/api/v1/deployment-state?environment=${environment}&commit=${versionCommit(versions - 1)}` },
    {
      name: `environment gate of ${environment} (page of 200)`,
      path: `/api/v1/deployment-state?environment=${environment}&commit=${versionCommit(versions - 1)}&limit=200`,
    },
    {
      name: `environment gate of ${environment} (UI page of 100)`,
      path: `/api/v1/deployment-state?environment=${environment}&commit=${versionCommit(versions - 1)}&limit=100`,
    },
  ];
}

export async function benchReports(baseUrl: string, size: FleetSize, repetitions = 40): Promise<ReportLatency[]> {
  const results: ReportLatency[] = [];
  for (const request of reportRequests(size)) {
    const timed = async (): Promise<{ ms: number; bytes: number }> => {
      const started = performance.now();
      const response = await fetch(`${baseUrl}${request.path}`);
      const body = await response.arrayBuffer();
      if (!response.ok) throw new Error(`${request.path} answered ${response.status}: ${Buffer.from(body).toString()}`);
      return { ms: performance.now() - started, bytes: body.byteLength };
    };
    const cold = await timed();
    const samples: number[] = [];
    for (let i = 0; i < repetitions; i += 1) samples.push((await timed()).ms);
    results.push({
      endpoint: request.name,
      coldMs: Math.round(cold.ms * 10) / 10,
      p50Ms: percentile(samples, 50),
      p95Ms: percentile(samples, 95),
      bytes: cold.bytes,
    });
    progress(`reports ${size.name}: ${request.name} p95 ${percentile(samples, 95)} ms`);
  }
  return results;
}

/**
 * The rollout gate as CD pipelines call it: many different targets, each asked once. The first pass
 * meets a hub just started: each of its connections plans the gate's prepared statements five times
 * before it keeps a generic plan (PREPARED_MARK in src/store/kept-plans.ts). `pass` 1 asks other
 * targets after it, as a hub that has run a while answers.
 */
export async function benchRolloutGate(baseUrl: string, size: FleetSize, requests = 300, pass = 0): Promise<ReportLatency> {
  const workloads = size.workspaces * size.applicationsPerWorkspace * size.workloadsPerApplication;
  const versions = Math.ceil(size.transitionsPerReconciler / 4);
  const samples: number[] = [];
  let bytes = 0;
  for (let n = 0; n < requests; n += 1) {
    const i = n + pass * requests;
    const environment = size.environments[i % size.environments.length]!;
    const endpoint = fleetEndpoint(environment, (i * 7919) % workloads, i % size.targetsPerWorkloadPerEnvironment);
    const started = performance.now();
    const response = await fetch(`${baseUrl}/api/v1/deployment-state?manifestsEndpoint=${encodeURIComponent(endpoint)}&commit=${versionCommit(versions - 1)}`);
    const body = await response.arrayBuffer();
    if (!response.ok) throw new Error(`rollout gate for ${endpoint} answered ${response.status}`);
    samples.push(performance.now() - started);
    bytes = Math.max(bytes, body.byteLength);
  }
  const name = pass === 0 ? `rollout gate, ${requests} different targets` : `rollout gate, ${requests} other targets after them`;
  return { endpoint: name, coldMs: Math.round(samples[0]! * 10) / 10, p50Ms: percentile(samples, 50), p95Ms: percentile(samples, 95), bytes };
}
