// The refreshes under a replay: the ingest bench's own workload (ingest-raw-grpc.ts: desired state
// for every round first, then the rounds of transitions; three runs), encoded as OTLP requests of
// 1,000 records, decoded and normalized as the receiver does and written through the store's writer,
// with the rollout and summary refreshes called after every 20 requests, as a timer would between
// exports. Each call's time is kept: the worst call is what a user's delivery report waits for,
// since a report folds the queue in before it reads. This is how the rollout refresh of schema/0016
// was caught taking 32 s and 219 s in single calls (schema/0022).
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { createLogger } from '../src/log/logger.ts';
import { normalizeLogsRequest } from '../src/normalize/otlp-logs.ts';
import { decodeLogsProtobuf } from '../src/sources/otlp/decode-protobuf.ts';
import type { Database } from '../src/store/connect.ts';
import { RecordWriter } from '../src/store/record-writer.ts';
import { refreshRollouts } from '../src/store/rollout-refresh.ts';
import { refreshSummaries } from '../src/store/summary-refresh.ts';
import { protobufRequest } from '../test/support/raw-otlp.ts';
import { percentile, progress } from './bench-report.ts';
import { desiredStateRecords, type IngestWorkload, workloadRecords } from './ingest-raw-grpc.ts';

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

function times(calls: readonly number[]): RefreshTimes {
  return {
    calls: calls.length,
    p50Ms: Math.round(percentile(calls, 50)),
    maxMs: Math.round(percentile(calls, 100)),
    totalMs: Math.round(calls.reduce((sum, ms) => sum + ms, 0)),
  };
}

/** `workload` without its runId: each run takes the next one, as the ingest bench's runs do. */
export async function benchRefreshReplay(database: Database, workload: Omit<IngestWorkload, 'runId'>): Promise<RefreshReplayResult> {
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
  // As the receiver takes an export: the request's bytes decoded, its records normalized.
  const write = async (records: readonly ReadableLogRecord[]): Promise<number> => {
    const normalized = normalizeLogsRequest(decodeLogsProtobuf(protobufRequest(records)), new Date());
    if (normalized.rejected.length > 0) throw new Error(`refresh replay: a record was rejected: ${normalized.rejected[0]!.reason}`);
    await writer.write(normalized.records);
    return normalized.records.length;
  };
  let records = 0;
  let requests = 0;
  for (let runId = 1; runId <= RUNS; runId += 1) {
    const run = { ...workload, runId };
    const desired = await desiredStateRecords(run);
    for (let i = 0; i < desired.length; i += BATCH) await write(desired.slice(i, i + BATCH));
    const rounds = await workloadRecords(run);
    for (const [round, reports] of rounds.entries()) {
      for (let i = 0; i < reports.length; i += BATCH) {
        records += await write(reports.slice(i, i + BATCH));
        requests += 1;
        if (requests % REFRESH_EVERY === 0) await refresh();
      }
      progress(`refresh replay: run ${runId}/${RUNS}, round ${round + 1}/${rounds.length}; worst rollout refresh ${Math.round(Math.max(...rolloutCalls, 0))} ms`);
    }
  }
  await refresh();
  return { records, rollouts: times(rolloutCalls), summaries: times(summaryCalls) };
}
