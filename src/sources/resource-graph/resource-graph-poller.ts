// One poll loop per Resource Graph source: query every Flux configuration of its subscriptions and
// the liveness of their clusters, map them to real state, store it, and remove the reconcilers this
// source reported before but no longer sees. A failing source reports why and keeps trying; it never
// stops the others.
import type { Kysely } from 'kysely';
import type { Logger } from '../../log/logger.ts';
import type { NormalizedRecord, RealStateRecord } from '../../model/deployment-records.ts';
import { CLUSTER_LIVENESS_QUERY, type ClusterLiveness, clusterIdOf, clusterLiveness } from '../../normalize/azure-clusters.ts';
import { mapFluxConfiguration } from '../../normalize/flux-configuration.ts';
import type { ResourceGraphSourceSpec } from '../../normalize/kube-resources.ts';
import type { HubDatabase } from '../../store/database-schema.ts';
import { reconcilersReportedBy, targetEndpoints, targetKey } from '../../store/polled-feed-queries.ts';
import { StoreUnavailableError } from '../../store/store-errors.ts';
import { sleep } from '../kube/backoff.ts';
import type { RecordSink } from '../../model/record-sink.ts';
import type { ResourceGraphMetrics } from './resource-graph-metrics.ts';
import { POLL_REASON, type PollStatus } from './resource-graph-pollers.ts';
import { FLUX_CONFIGURATIONS_QUERY, type ResourceGraphQuery, ThrottledError } from './resource-graph-query.ts';

export interface PollerDeps {
  readonly sink: RecordSink;
  readonly db: Kysely<HubDatabase>;
  /** Builds the query client of a source (its credential, the ARM endpoint). */
  readonly connect: (source: ResourceGraphSourceSpec) => Promise<ResourceGraphQuery>;
  readonly metrics: ResourceGraphMetrics;
  readonly log: Logger;
  readonly clock: () => Date;
}

export interface PollOutcome {
  readonly rows: number;
  readonly reconcilers: number;
  readonly removed: number;
  readonly requests: number;
  readonly ignored: readonly string[];
}

export class ResourceGraphPoller {
  #source: ResourceGraphSourceSpec;
  readonly #deps: PollerDeps;
  readonly #onStatus: (status: PollStatus) => void;
  readonly #log: Logger;
  readonly #stop = new AbortController();
  #wake: AbortController = new AbortController();
  #query: ResourceGraphQuery | undefined;
  #loop: Promise<void> | undefined;
  #lastStatus: PollStatus | undefined;

  constructor(source: ResourceGraphSourceSpec, deps: PollerDeps, onStatus: (status: PollStatus) => void) {
    this.#source = source;
    this.#deps = deps;
    this.#onStatus = (status) => {
      this.#lastStatus = status;
      onStatus(status);
    };
    this.#log = deps.log.child({ source: `arg:${source.name}` });
  }

  get reportedBy(): string {
    return `arg:${this.#source.name}`;
  }

  /** The spec the loop polls with now (its resource may have been edited since it started). */
  get source(): ResourceGraphSourceSpec {
    return this.#source;
  }

  /** The outcome of the latest poll (also written to the resource's Ready condition). */
  get lastStatus(): PollStatus | undefined {
    return this.#lastStatus;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** A changed spec takes effect at once: a new credential, and a poll now. */
  reconfigure(source: ResourceGraphSourceSpec): void {
    if (JSON.stringify(source) === JSON.stringify(this.#source)) return;
    this.#source = source;
    this.#query = undefined;
    this.#wake.abort();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    this.#wake.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      await this.pollOnce().catch(() => undefined);
      this.#wake = new AbortController();
      await sleep(this.#source.intervalMs, AbortSignal.any([this.#stop.signal, this.#wake.signal]));
    }
  }

  /** One poll; reports its outcome through the status callback (and returns it). */
  async pollOnce(): Promise<PollOutcome> {
    const { metrics } = this.#deps;
    const labels = { source: this.#source.name };
    const started = this.#deps.clock();
    try {
      this.#query ??= await this.#deps.connect(this.#source);
      const result = await this.#query.queryAll(this.#source.subscriptions, FLUX_CONFIGURATIONS_QUERY, this.#stop.signal);
      const clusters = await this.#query.queryAll(this.#source.subscriptions, CLUSTER_LIVENESS_QUERY, this.#stop.signal);
      metrics.requests.inc(labels, result.requests + clusters.requests);
      metrics.throttled.inc(labels, result.throttled + clusters.throttled);
      const liveness = new Map<string, ClusterLiveness>();
      for (const row of clusters.rows) {
        const cluster = clusterLiveness(row, started);
        if (cluster !== undefined) liveness.set(cluster.clusterId, cluster);
      }
      const { records, ignored } = await this.#map(result.rows, liveness, started);
      await this.#deps.sink.write(records);
      const removed = await this.#collectGarbage(records, started);
      // A record and its confirmation are one reconciler.
      const reconcilers = new Set(records.map((record) => `${record.host.name}\u0000${record.reconciler.name}`)).size;
      metrics.rows.set(labels, result.rows.length);
      metrics.upserted.inc(labels, reconcilers);
      metrics.removed.inc(labels, removed);
      metrics.lastSuccess.set(labels, this.#deps.clock().getTime() / 1_000);
      const outcome = { rows: result.rows.length, reconcilers, removed, requests: result.requests + clusters.requests, ignored };
      this.#onStatus({
        ready: true,
        reason: POLL_REASON.polled,
        message:
          `${outcome.rows} flux configurations → ${outcome.reconcilers} reconcilers` +
          `${removed > 0 ? `, ${removed} removed` : ''}${ignored.length > 0 ? `; ignored: ${ignored.slice(0, 3).join('; ')}${ignored.length > 3 ? ` (+${ignored.length - 3} more)` : ''}` : ''}`,
        lastPollTime: started,
        rowsSeen: outcome.rows,
      });
      return outcome;
    } catch (error) {
      metrics.errors.inc(labels);
      const message = (error as Error).message;
      const reason =
        error instanceof StoreUnavailableError
          ? POLL_REASON.storeUnavailable
          : error instanceof ThrottledError
            ? POLL_REASON.throttled
            : /authenticat|credential|token|AADSTS|identity/i.test(`${(error as Error).name} ${message}`)
              ? POLL_REASON.authenticationFailed
              : POLL_REASON.pollFailed;
      this.#log.warn({ reason, err: message }, 'Resource Graph poll failed');
      // A failed credential may be fixed by a new secret: build it afresh next time.
      if (reason === POLL_REASON.authenticationFailed) this.#query = undefined;
      this.#onStatus({ ready: false, reason, message });
      throw error;
    }
  }

  async #map(
    rows: readonly unknown[],
    liveness: ReadonlyMap<string, ClusterLiveness>,
    polledAt: Date,
  ): Promise<{ records: RealStateRecord[]; ignored: string[] }> {
    const records: RealStateRecord[] = [];
    const ignored: string[] = [];
    const pending: ReturnType<typeof mapFluxConfiguration>['pending'] = [];
    for (const row of rows) {
      const id = typeof (row as { id?: unknown } | null)?.id === 'string' ? (row as { id: string }).id : '';
      const cluster = clusterIdOf(id);
      const mapping = mapFluxConfiguration(row, polledAt, cluster === undefined ? undefined : liveness.get(cluster));
      if (mapping.rejected !== undefined) ignored.push(mapping.rejected);
      records.push(...mapping.records);
      pending.push(...mapping.pending);
      ignored.push(...mapping.ignored);
    }
    // A name without workspace and application (`env.workload.target`) takes the source's defaults.
    const { defaultWorkspace, defaultApplication } = this.#source;
    const references = pending.map((entry) =>
      entry.target.workspace === undefined ? { ...entry.target, workspace: defaultWorkspace, application: entry.target.application ?? defaultApplication } : entry.target,
    );
    const endpoints = await targetEndpoints(this.#deps.db, references);
    let ambiguous = 0;
    pending.forEach((entry, index) => {
      const reference = references[index]!;
      const matches = endpoints.get(targetKey(reference)) ?? [];
      const name = `${reference.environment}/${reference.workload}/${reference.deploymentTarget}`;
      if (matches.length === 0) {
        // Say where it was looked for when the source's defaults narrowed it.
        const within = entry.target.workspace === undefined && reference.workspace !== undefined ? ` in ${reference.workspace}/${reference.application ?? '*'}` : '';
        ignored.push(`no deployment target ${name}${within} is known yet`);
      } else if (matches.length > 1) {
        // Which one is a guess: say so, and how to settle it, rather than take one silently.
        ambiguous += 1;
        ignored.push(
          `${matches.length} deployment targets match ${name} (${matches.map((match) => `${match.workspace}/${match.application}`).join(', ')}): ` +
            'name the Kustomization env.workspace.application.workload.target, or set defaultWorkspace and defaultApplication',
        );
      } else {
        records.push(...entry.complete(matches[0]!.endpoint));
      }
    });
    this.#deps.metrics.ambiguous.set({ source: this.#source.name }, ambiguous);
    return { records: records.map((record) => ({ ...record, reportedBy: this.reportedBy })), ignored };
  }

  async #collectGarbage(records: readonly RealStateRecord[], polledAt: Date): Promise<number> {
    const seen = new Set(records.map((record) => `${record.host.name}\u0000${record.reconciler.name}`));
    const vanished = (await reconcilersReportedBy(this.#deps.db, this.reportedBy)).filter(
      (reconciler) => !seen.has(`${reconciler.host}\u0000${reconciler.reconciler}`),
    );
    if (vanished.length === 0) return 0;
    const removals: NormalizedRecord[] = vanished.map((reconciler) => ({ kind: 'reconciler-removed', ...reconciler, removedAt: polledAt }));
    return (await this.#deps.sink.write(removals)).removed;
  }
}
