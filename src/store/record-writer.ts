// The store's write path: the RecordSink every source feeds. A call is one transaction (all of
// its records or none), retried on deadlocks and serialization failures; dimension rows are
// resolved first, outside the transaction (see dimension-ids.ts).
import type { Kysely } from 'kysely';
import type { DesiredStateRecord, ManifestsRef, NormalizedRecord, RealStateRecord, ReconcilerRemovedRecord } from '../model/deployment-records.ts';
import { DEFAULT_HOST_TYPE } from '../model/deployment-records.ts';
import type { FluxObjectRecord } from '../model/flux-objects.ts';
import type { Logger } from '../log/logger.ts';
import type { RecordSink, WriteSummary } from '../model/record-sink.ts';
import type { HubDatabase } from './database-schema.ts';
import { BoundedCache } from './bounded-cache.ts';
import { RecordedEvidence } from './commit-evidence.ts';
import { DimensionIds, type DimensionRow } from './dimension-ids.ts';
import { recordBranches } from './endpoint-branches.ts';
import type { StateChanges } from './state-changes.ts';
import {
  isDatabaseUnavailable,
  isMissingReference,
  isRepeatedHistoryRow,
  isTransientConflict,
  StoreUnavailableError,
} from './store-errors.ts';
import { type ResolvedDescriptor, writeDesiredState } from './write-desired-state.ts';
import { type ResolvedStateReport, writeRealState } from './write-real-state.ts';
import { writeFluxObjects } from './write-flux-objects.ts';
import { writeRemovals } from './write-removals.ts';
import { appendPendingReports } from './write-pending-reports.ts';
import { projectionCurrent } from './projector.ts';
import { FAILED_WRITE_WAIT_FACTOR, RETRY_LATER_SECONDS } from './retry-policy.ts';

const MAX_ATTEMPTS = 5;

export interface RecordWriterOptions {
  /** Seconds a client is asked to wait when the database is unavailable (default: the retry policy's). */
  readonly retryAfterSeconds?: number;
  /** Told which manifests endpoints changed after each commit. */
  readonly stateChanges?: StateChanges;
  /** The clock; tests pin it. */
  readonly now?: () => Date;
  /**
   * --append-first (issue 40): a batch of real-state reports only is acknowledged once appended to
   * pending_report (write-pending-reports.ts), and `appended` is told so (it wakes the projector).
   */
  readonly appendFirst?: { appended(): void };
}

export class RecordWriter implements RecordSink {
  readonly #db: Kysely<HubDatabase>;
  readonly #ids: DimensionIds;
  /** Endpoint branches already written, so that each costs one statement per hub, not per batch. */
  readonly #branches = new BoundedCache<string, true>(100_000);
  readonly #evidence = new RecordedEvidence();
  readonly #log: Logger;
  readonly #options: RecordWriterOptions;
  /** Seconds a client is asked to wait when the database is unavailable. */
  readonly #retryAfterSeconds: number;
  #inFlight = 0;
  /** When the last write ended (performance.now()). */
  #lastEnded = -Infinity;

  constructor(db: Kysely<HubDatabase>, log: Logger, options: RecordWriterOptions) {
    this.#db = db;
    this.#ids = new DimensionIds(db);
    this.#log = log;
    this.#options = options;
    this.#retryAfterSeconds = options.retryAfterSeconds ?? RETRY_LATER_SECONDS;
  }

  /**
   * Whether a write is under way or one ended less than `gapMs` ago: the background refreshes give
   * way to writes (see hub.ts). A burst's exports are read and decoded between writes, so the
   * writer alone is idle for moments while the burst goes on.
   */
  writingWithin(gapMs: number): boolean {
    return this.#inFlight > 0 || performance.now() - this.#lastEnded < gapMs;
  }

  async write(records: readonly NormalizedRecord[]): Promise<WriteSummary> {
    this.#inFlight += 1;
    try {
      return await this.#write(records);
    } finally {
      this.#inFlight -= 1;
      this.#lastEnded = performance.now();
    }
  }

  async #write(records: readonly NormalizedRecord[]): Promise<WriteSummary> {
    const realStates = records.filter((record): record is RealStateRecord => record.kind === 'real-state');
    const desiredStates = records.filter((record): record is DesiredStateRecord => record.kind === 'desired-state');
    const removals = records.filter((record): record is ReconcilerRemovedRecord => record.kind === 'reconciler-removed');
    const fluxObjects = records.filter((record): record is FluxObjectRecord => record.kind === 'flux-object');
    if (records.length === 0) return { realStates: 0, desiredStates: 0, transitions: 0, assignments: 0, removed: 0 };
    const receivedAt = (this.#options.now ?? (() => new Date()))();
    try {
      const derived = await writeFluxObjects(this.#db, fluxObjects);
      realStates.push(...derived.realStates);
      removals.push(...derived.removals);
      for (let idsRefreshed = false; ; idsRefreshed = true) {
        try {
          return await this.#writeResolved(realStates, desiredStates, removals, receivedAt);
        } catch (error) {
          // Without this, every later batch naming those rows would fail the same way until the
          // hub restarted: collectors would retry in vain.
          if (idsRefreshed || !isMissingReference(error)) throw error;
          this.#log.warn({ err: (error as Error).message }, 'a cached row id no longer exists in the database; looking ids up again');
          this.#ids.clear();
          this.#branches.clear();
          this.#evidence.clear();
        }
      }
    } catch (error) {
      if (isDatabaseUnavailable(error)) {
        throw new StoreUnavailableError(`database unavailable: ${(error as Error).message}`, this.#retryAfterSeconds, {
          cause: error,
        });
      }
      // Not the input's fault (the normalizer vouched for it) and not an outage: a defect or a
      // database in trouble. Collectors must keep the data, so this too asks them to retry.
      this.#log.error({ err: error }, 'storing records failed');
      throw new StoreUnavailableError(`storing records failed: ${(error as Error).message}`, this.#retryAfterSeconds * FAILED_WRITE_WAIT_FACTOR, {
        cause: error,
        outage: false,
      });
    }
  }

  async #writeResolved(
    realStates: readonly RealStateRecord[],
    desiredStates: readonly DesiredStateRecord[],
    removals: readonly ReconcilerRemovedRecord[],
    receivedAt: Date,
  ): Promise<WriteSummary> {
    const descriptors = await this.#resolveDescriptors(desiredStates, receivedAt);
    const reports = await this.#resolveReports(realStates, receivedAt);
    await recordBranches(
      this.#db,
      this.#branches,
      [
        ...descriptors.map((d) => ({ endpointId: d.endpointId, ...branchAndRepo(d.record.deploymentTarget.manifests) })),
        ...realStates.map((record, index) => ({ endpointId: reports[index]!.endpointId, ...branchAndRepo(record.manifests) })),
      ],
    );
    if (this.#options.appendFirst !== undefined) {
      if (descriptors.length === 0 && removals.length === 0) return await this.#append(realStates, reports, receivedAt);
      // Desired state and removals are written as before, in order after every report acknowledged
      // before them: a removal folded before an earlier report would let that report bring the
      // current state back.
      await projectionCurrent(this.#db);
    }
    let trustNewer = true;
    for (let attempt = 1; ; attempt += 1) {
      try {
        const { summary, evidence } = await this.#db.transaction().execute(async (trx) => {
          const desired = await writeDesiredState(trx, descriptors);
          const real = await writeRealState(trx, reports, receivedAt, { recorded: this.#evidence, trustNewer });
          const removed = await writeRemovals(trx, removals);
          return {
            summary: {
              realStates: realStates.length,
              desiredStates: desiredStates.length,
              transitions: real.transitions,
              assignments: desired.assignments,
              removed,
            },
            evidence: real.evidence,
          };
        });
        this.#evidence.remember(evidence);
        this.#options.stateChanges?.notify([
          ...realStates.map((record) => record.manifests.endpoint),
          ...desiredStates.map((record) => record.deploymentTarget.manifests.endpoint),
        ]);
        return summary;
      } catch (error) {
        if (trustNewer && isRepeatedHistoryRow(error)) {
          // Not expected (write-real-state.ts, newerThanHistory): said, and the write checks every row.
          this.#log.warn({ err: (error as Error).message }, 'a history row trusted to be new was stored already; writing again with every row checked');
          trustNewer = false;
          continue;
        }
        if (!isTransientConflict(error) || attempt >= MAX_ATTEMPTS) throw error;
        this.#log.debug({ attempt, err: error }, 'write conflicted with a concurrent writer; retrying');
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
      }
    }
  }

  /** The acknowledged write of --append-first; what the reports change is known only once projected. */
  async #append(records: readonly RealStateRecord[], reports: readonly ResolvedStateReport[], receivedAt: Date): Promise<WriteSummary> {
    await appendPendingReports(this.#db, reports, receivedAt);
    this.#options.appendFirst?.appended();
    // Gate long-polls read again at once; they fold the reports in before reading (projectionCurrent).
    this.#options.stateChanges?.notify(records.map((record) => record.manifests.endpoint));
    return { realStates: reports.length, desiredStates: 0, transitions: 0, assignments: 0, removed: 0 };
  }

  async #resolveReports(records: readonly RealStateRecord[], receivedAt: Date): Promise<ResolvedStateReport[]> {
    if (records.length === 0) return [];
    return this.#resolveCachedReports(records) ?? (await this.#resolveNewReports(records, receivedAt));
  }

  /**
   * Every id of a batch from the cache, as for all but a fleet's first reports; undefined at the
   * first record naming a row not cached. Three lookups a record: the full path's dedup maps and
   * repeated key strings were 7 % of the hub's CPU under a replay.
   */
  #resolveCachedReports(records: readonly RealStateRecord[]): ResolvedStateReport[] | undefined {
    const resolved: ResolvedStateReport[] = [];
    for (const record of records) {
      const endpointId = this.#ids.cached('manifestsEndpoint', record.manifests.endpoint);
      const hostId = this.#ids.cached('host', record.host.name);
      if (endpointId === undefined || hostId === undefined) return undefined;
      const reconcilerId = this.#ids.cached('reconciler', DimensionIds.cacheKey([hostId, record.reconciler.name]));
      if (reconcilerId === undefined) return undefined;
      resolved.push(resolvedReport(record, reconcilerId, hostId, endpointId));
    }
    return resolved;
  }

  /** Ids found or created for every row a batch names (see dimension-ids.ts). */
  async #resolveNewReports(records: readonly RealStateRecord[], receivedAt: Date): Promise<ResolvedStateReport[]> {
    const seen = (record: RealStateRecord): Date => (record.observedAt < receivedAt ? record.observedAt : receivedAt);
    // A batch names few endpoints and hosts many times: each is asked for once (the last record
    // naming it decides what a new row starts with). A key of one part is the part itself.
    const endpointIds = await this.#ids.ensure(
      'manifestsEndpoint',
      lastOfEach(records, (record) => record.manifests.endpoint).map((record) => ({
        key: [record.manifests.endpoint],
        extra: [record.manifests.storageType],
      })),
    );
    const hostIds = await this.#ids.ensure(
      'host',
      lastOfEach(records, (record) => record.host.name).map((record) => ({
        key: [record.host.name],
        extra: [record.host.type ?? DEFAULT_HOST_TYPE, seen(record), seen(record)],
      })),
    );
    const hostOf = records.map((record) => hostIds.get(record.host.name)!);
    const reconcilerKeys = records.map((record, index) => DimensionIds.cacheKey([hostOf[index]!, record.reconciler.name]));
    const reconcilerIds = await this.#ids.ensure(
      'reconciler',
      lastOfEach(records.keys(), (index) => reconcilerKeys[index]!).map((index) => ({
        key: [hostOf[index]!, records[index]!.reconciler.name],
        extra: [records[index]!.reconciler.type, endpointIds.get(records[index]!.manifests.endpoint)!],
      })),
    );
    return records.map((record, index) =>
      resolvedReport(record, reconcilerIds.get(reconcilerKeys[index]!)!, hostOf[index]!, endpointIds.get(record.manifests.endpoint)!),
    );
  }

  async #resolveDescriptors(records: readonly DesiredStateRecord[], receivedAt: Date): Promise<ResolvedDescriptor[]> {
    if (records.length === 0) return [];
    const key = (parts: DimensionRow['key']): string => DimensionIds.cacheKey(parts);
    const workspaces = await this.#ids.ensure('workspace', records.map((r) => ({ key: [r.workspace] })));
    const applicationKey = (r: DesiredStateRecord): DimensionRow['key'] => [workspaces.get(key([r.workspace]))!, r.application];
    const applications = await this.#ids.ensure('application', records.map((r) => ({ key: applicationKey(r) })));
    const workloadKey = (r: DesiredStateRecord): DimensionRow['key'] => [applications.get(key(applicationKey(r)))!, r.workload.name];
    const workloads = await this.#ids.ensure('workload', records.map((r) => ({ key: workloadKey(r) })));
    const environments = await this.#ids.ensure(
      'environment',
      firstSeenRanks(records, receivedAt).map(([environment, rank]) => ({ key: [environment], extra: [rank] })),
    );
    const endpoints = await this.#ids.ensure(
      'manifestsEndpoint',
      records.map((r) => ({ key: [r.deploymentTarget.manifests.endpoint], extra: [r.deploymentTarget.manifests.storageType] })),
    );
    return records.map((record) => ({
      record,
      workloadId: workloads.get(key(workloadKey(record)))!,
      environmentId: environments.get(key([record.environment]))!,
      endpointId: endpoints.get(key([record.deploymentTarget.manifests.endpoint]))!,
    }));
  }
}

function resolvedReport(record: RealStateRecord, reconcilerId: number, hostId: number, endpointId: number): ResolvedStateReport {
  return {
    reconcilerId,
    hostId,
    hostType: record.host.type,
    reconcilerType: record.reconciler.type,
    reportedBy: record.reportedBy,
    endpointId,
    commitId: record.commitId,
    status: record.status,
    message: record.statusMessage,
    observedAt: record.observedAt,
    details: record.details === undefined ? undefined : JSON.stringify(record.details),
  };
}

/** One item per key, the last one naming it, in the order the keys first appear. */
function lastOfEach<T, K>(items: Iterable<T>, keyOf: (item: T) => K): T[] {
  const last = new Map<K, T>();
  for (const item of items) last.set(keyOf(item), item);
  return [...last.values()];
}

/**
 * The environments of one write in the order it shows them first: by the earliest record time
 * naming each (never later than receipt: a clock running ahead must not push an environment back),
 * then by where each first appears. Environments this write creates keep that order among
 * themselves (schema/0009); for those that exist already the rank is ignored.
 */
function firstSeenRanks(records: readonly DesiredStateRecord[], receivedAt: Date): [environment: string, rank: number][] {
  const first = new Map<string, { time: number; position: number }>();
  records.forEach((record, position) => {
    const time = Math.min(record.assignedAt.getTime(), receivedAt.getTime());
    const seen = first.get(record.environment);
    if (seen === undefined) first.set(record.environment, { time, position });
    else if (time < seen.time) seen.time = time;
  });
  return [...first.entries()]
    .sort(([, a], [, b]) => a.time - b.time || a.position - b.position)
    .map(([environment], rank) => [environment, rank]);
}

function branchAndRepo(manifests: ManifestsRef): { branch: string | undefined; repo: string | undefined } {
  return { branch: manifests.branch, repo: manifests.repo };
}
