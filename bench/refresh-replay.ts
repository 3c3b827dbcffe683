// The refreshes under a replay: the ingest bench's workload (desired state for every round first,
// then 2,000 new hosts × 12 reconcilers × 5 rounds of transitions, three runs) written straight
// through the store's writer, with the rollout and summary refreshes called after every 20 batches
// of 1,000, as a timer would between exports. Each call's time is kept: the worst call is what a
// user's delivery report waits for, since a report folds the queue in before it reads. This is how
// the rollout refresh of schema/0016 was caught taking 32 s and 219 s in single calls (schema/0022).
import { createLogger } from '../src/log/logger.ts';
import type { DesiredStateRecord, NormalizedRecord, RealStateRecord } from '../src/model/deployment-records.ts';
import type { Database } from '../src/store/connect.ts';
import { RecordWriter } from '../src/store/record-writer.ts';
import { refreshRollouts } from '../src/store/rollout-refresh.ts';
import { refreshSummaries } from '../src/store/summary-refresh.ts';
import { progress } from './bench-report.ts';

const ENVIRONMENTS = 4;
const RECONCILERS_PER_HOST = 12;
const HOSTS = 2_000;
const ROUNDS = 5;
const RUNS = 3;
const BATCH = 1_000;
const REFRESH_EVERY = 20;

export interface RefreshTimes {
  readonly calls: number;
  readonly p50Ms: number;
  readonly maxMs: number;
  readonly totalMs: number;
}

export interface RefreshReplayResult {
  readonly records: number;
  readonly rollouts: RefreshTimes;
  readonly summaries: RefreshTimes;
}

const commitOf = (run: number, round: number) => (run * 1_000 + round + 1).toString(16).padStart(40, '0');
const branchOf = (run: number, environment: number) => `replay-${run}-env-${environment}`;
const endpointOf = (run: number, environment: number, workload: number) =>
  `https://github.com/contoso/gitops/${branchOf(run, environment)}/workload-${workload}`;

function desiredState(run: number, start: number): DesiredStateRecord[] {
  const records: DesiredStateRecord[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    for (let e = 0; e < ENVIRONMENTS; e += 1) {
      for (let w = 0; w < RECONCILERS_PER_HOST; w += 1) {
        const version = `1.0.${Math.floor(round / 2)}`;
        records.push({
          kind: 'desired-state',
          workspace: 'contoso',
          application: 'replay',
          workload: { name: `workload-${w}`, source: undefined },
          environment: branchOf(run, e),
          deploymentTarget: { name: `workload-${w}`, manifests: { storageType: 'git', endpoint: endpointOf(run, e, w) } },
          workloadVersion: { version, build: `b-${version}`, commit: undefined, buildTime: undefined },
          commitId: commitOf(run, round),
          assignedAt: new Date(start + round * 60_000 - 30_000),
        });
      }
    }
  }
  return records;
}

function stateReport(run: number, round: number, host: number, workload: number, start: number): RealStateRecord {
  const environment = host % ENVIRONMENTS;
  const commit = commitOf(run, round);
  const inProgress = round % 2 === 0;
  return {
    kind: 'real-state',
    host: { name: `replay-${run}-host-${host}`, type: undefined },
    reconciler: { name: `flux-system/workload-${workload}`, type: 'flux' },
    manifests: { storageType: 'git', endpoint: endpointOf(run, environment, workload) },
    commitId: commit,
    status: inProgress ? 'in_progress' : 'success',
    // A Flux Kustomization's Ready messages (../shared/fixtures).
    statusMessage: inProgress ? 'Reconciliation in progress' : `Applied revision: ${branchOf(run, environment)}@sha1:${commit}`,
    observedAt: new Date(start + round * 60_000 + host),
  };
}

function times(calls: readonly number[]): RefreshTimes {
  const sorted = [...calls].sort((a, b) => a - b);
  return {
    calls: sorted.length,
    p50Ms: Math.round(sorted[Math.floor((sorted.length - 1) / 2)] ?? 0),
    maxMs: Math.round(sorted.at(-1) ?? 0),
    totalMs: Math.round(sorted.reduce((sum, ms) => sum + ms, 0)),
  };
}

export async function benchRefreshReplay(database: Database): Promise<RefreshReplayResult> {
  const writer = new RecordWriter(database.db, createLogger('silent'), { retryAfterSeconds: 1 });
  const rolloutCalls: number[] = [];
  const summaryCalls: number[] = [];
  const refresh = async (): Promise<void> => {
    let began = performance.now();
    await refreshRollouts(database.db, { wait: true });
    rolloutCalls.push(performance.now() - began);
    began = performance.now();
    await refreshSummaries(database.db, { wait: true, at: new Date() });
    summaryCalls.push(performance.now() - began);
  };
  let records = 0;
  let batches = 0;
  for (let run = 1; run <= RUNS; run += 1) {
    const start = Date.now() - (ROUNDS + 1) * 60_000;
    await writer.write(desiredState(run, start));
    for (let round = 0; round < ROUNDS; round += 1) {
      let batch: NormalizedRecord[] = [];
      for (let host = 0; host < HOSTS; host += 1) {
        for (let workload = 0; workload < RECONCILERS_PER_HOST; workload += 1) {
          batch.push(stateReport(run, round, host, workload, start));
          if (batch.length < BATCH) continue;
          await writer.write(batch);
          records += batch.length;
          batch = [];
          batches += 1;
          if (batches % REFRESH_EVERY === 0) await refresh();
        }
      }
      if (batch.length > 0) await writer.write(batch);
      records += batch.length;
      progress(`refresh replay: run ${run}/${RUNS}, round ${round + 1}/${ROUNDS}; worst rollout refresh ${Math.round(Math.max(...rolloutCalls, 0))} ms`);
    }
  }
  await refresh();
  return { records, rollouts: times(rolloutCalls), summaries: times(summaryCalls) };
}
