// The CRD watcher's controller: informers for DeploymentDescriptors, Reconcilers,
// AzureResourceGraphs and Flux Kustomizations feed one work queue; each batch becomes normalized
// records written to the store in one transaction, then Ready conditions on the resources.
import type { CustomObjectsApi, KubeConfig, KubernetesListObject } from '@kubernetes/client-node';
import type { Logger } from '../../log/logger.ts';
import type { NormalizedRecord, RealStateRecord } from '../../model/deployment-records.ts';
import {
  declaresHeartbeat,
  descriptorCommitSource,
  kustomizationAppliedAt,
  normalizeDescriptorResource,
  normalizeReconcilerResource,
  parseResourceGraphSpec,
} from '../../normalize/kube-resources.ts';
import { StoreUnavailableError } from '../../store/store-errors.ts';
import type { ResourceGraphPollers } from '../resource-graph/resource-graph-pollers.ts';
import type { RecordSink } from '../source.ts';
import {
  AZURE_RESOURCE_GRAPHS,
  collectionPath,
  DEPLOYMENT_DESCRIPTORS,
  FLUX_KUSTOMIZATIONS,
  type KubeObject,
  objectKey,
  RECONCILERS,
  type ResourceType,
} from './kube-objects.ts';
import { ResilientInformer } from './resilient-informer.ts';
import { isNotFound, type ReadyCondition, StatusWriter } from './status-writer.ts';
import { WorkQueue } from './work-queue.ts';

export interface KubeControllerOptions {
  /** Namespaces to watch; empty: all namespaces. */
  readonly namespaces: readonly string[];
  readonly resyncMs: number;
  /**
   * How often the API server is asked for every Reconciler, to confirm those without a heartbeat:
   * well inside stale-after, so that a resource that holds does not turn stale.
   */
  readonly confirmEveryMs: number;
  /** The hub's clock: confirmations are observations at its now. */
  readonly clock: () => Date;
}

type Kind = 'descriptor' | 'reconciler' | 'graph' | 'kustomization';
const TYPES: Record<Kind, ResourceType> = {
  descriptor: DEPLOYMENT_DESCRIPTORS,
  reconciler: RECONCILERS,
  graph: AZURE_RESOURCE_GRAPHS,
  kustomization: FLUX_KUSTOMIZATIONS,
};

interface Outcome {
  readonly key: string;
  readonly object: KubeObject;
  readonly record: NormalizedRecord | undefined;
  readonly condition: ReadyCondition;
  readonly statusFields?: Record<string, unknown>;
}

export class KubeController {
  readonly #api: CustomObjectsApi;
  readonly #status: StatusWriter;
  readonly #sink: RecordSink;
  readonly #pollers: ResourceGraphPollers;
  /** The poll loops this controller runs for AzureResourceGraph resources (not --arg-config's, which run on every replica). */
  readonly #graphPollers = new Set<string>();
  readonly #log: Logger;
  readonly #informers = new Map<Kind, ResilientInformer[]>();
  readonly #queue: WorkQueue;
  /** Reconcilers deleted since they were last processed: what to remove from the store. */
  readonly #tombstones = new Map<string, KubeObject>();
  /** What was last stored per key, so that resyncs and our own status writes cost no transaction. */
  readonly #stored = new Map<string, string>();
  /**
   * When each Kustomization applied its last applied revision, as first established: Flux moves
   * the Ready transition on every interval, but an assignment's time must not move with it.
   */
  readonly #appliedAt = new Map<string, { readonly revision: string; readonly at: Date }>();
  /** When each Reconciler (by queue key) was last confirmed, in ms. */
  readonly #confirmedAt = new Map<string, number>();
  /** The API server's latest list of Reconcilers: when it was asked, and each one's resourceVersion. */
  #vouched: { readonly at: Date; readonly versions: ReadonlyMap<string, string | undefined> } | undefined;
  readonly #options: KubeControllerOptions;
  #confirmTimer: NodeJS.Timeout | undefined;
  #vouching = false;
  #stopped = false;

  constructor(
    kubeConfig: KubeConfig,
    api: CustomObjectsApi,
    sink: RecordSink,
    pollers: ResourceGraphPollers,
    options: KubeControllerOptions,
    log: Logger,
  ) {
    this.#api = api;
    this.#status = new StatusWriter(api);
    this.#sink = sink;
    this.#pollers = pollers;
    this.#log = log.child({ source: 'kube' });
    this.#options = options;
    this.#queue = new WorkQueue((keys) => this.#process(keys), { batchSize: 500, batchDelayMs: 50 }, this.#log);
    const namespaces = options.namespaces.length === 0 ? [undefined] : options.namespaces;
    for (const kind of Object.keys(TYPES) as Kind[]) {
      const type = TYPES[kind];
      this.#informers.set(
        kind,
        namespaces.map(
          (namespace) =>
            new ResilientInformer(
              kubeConfig,
              {
                name: `${type.plural}${namespace === undefined ? '' : `@${namespace}`}`,
                path: collectionPath(type, namespace),
                list: () => this.#list(type, namespace),
                resyncMs: options.resyncMs,
                onChange: (key, object, previous) => this.#changed(kind, key, object, previous),
              },
              this.#log,
            ),
        ),
      );
    }
  }

  /** Starts every informer; resolves when the hub's own kinds are listed (Flux may be absent). */
  async start(): Promise<void> {
    const all = [...this.#informers.entries()];
    for (const [, informers] of all) for (const informer of informers) void informer.start();
    this.#confirmTimer = setInterval(() => void this.#vouch(), this.#options.confirmEveryMs);
    this.#confirmTimer.unref();
    await Promise.all(
      all.filter(([kind]) => kind !== 'kustomization').flatMap(([, informers]) => informers.map((informer) => informer.start())),
    );
    void this.#vouch();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#confirmTimer);
    await Promise.all([...this.#informers.values()].flat().map((informer) => informer.stop()));
    await this.#queue.stop();
    await Promise.all([...this.#graphPollers].map((key) => this.#removePoller(key)));
  }

  /** Resolves when every queued change has been processed. */
  idle(): Promise<void> {
    return this.#queue.idle();
  }

  #list(type: ResourceType, namespace: string | undefined): Promise<KubernetesListObject<KubeObject>> {
    const { group, version, plural } = type;
    return (
      namespace === undefined
        ? this.#api.listClusterCustomObject({ group, version, plural })
        : this.#api.listNamespacedCustomObject({ group, version, plural, namespace })
    ) as Promise<KubernetesListObject<KubeObject>>;
  }

  #changed(kind: Kind, key: string, object: KubeObject | undefined, previous: KubeObject | undefined): void {
    if (kind === 'kustomization') {
      // Descriptors waiting for (or following) this Kustomization's revision are due again.
      for (const descriptor of this.#objects('descriptor')) {
        const source = descriptorCommitSource(descriptor);
        if (source.kind === 'kustomization' && `${source.namespace}/${source.name}` === key) {
          this.#queue.add(`descriptor:${descriptor.metadata.namespace ?? ''}/${descriptor.metadata.name ?? ''}`);
        }
      }
      return;
    }
    if (object === undefined && previous !== undefined && kind === 'reconciler') this.#tombstones.set(key, previous);
    if (object !== undefined) this.#tombstones.delete(key);
    this.#queue.add(`${kind}:${key}`);
  }

  #objects(kind: Kind): KubeObject[] {
    return (this.#informers.get(kind) ?? []).flatMap((informer) => [...informer.list()]);
  }

  #get(kind: Kind, key: string): KubeObject | undefined {
    for (const informer of this.#informers.get(kind) ?? []) {
      const object = informer.get(key);
      if (object !== undefined) return object;
    }
    return undefined;
  }

  async #process(keys: readonly string[]): Promise<string[]> {
    const now = this.#options.clock();
    const outcomes: Outcome[] = [];
    const removals: NormalizedRecord[] = [];
    for (const queued of keys) {
      const separator = queued.indexOf(':');
      const kind = queued.slice(0, separator) as Kind;
      const key = queued.slice(separator + 1);
      const object = this.#get(kind, key);
      if (kind === 'graph') {
        await this.#reconcileGraph(key, object);
      } else if (object !== undefined) {
        outcomes.push(kind === 'descriptor' ? this.#descriptor(queued, object, now) : this.#reconciler(queued, object, now));
      } else if (kind === 'reconciler') {
        const removal = this.#removal(key, now);
        if (removal !== undefined) removals.push(removal);
      }
    }

    const fresh = outcomes.filter((outcome) => outcome.record !== undefined && this.#stored.get(outcome.key) !== fingerprint(outcome.record));
    const confirmations = this.#confirmations(outcomes);
    const records = [...fresh.map((outcome) => this.#afterConfirmation(outcome.key, outcome.record!)), ...confirmations.map(([, record]) => record), ...removals];
    if (records.length > 0) {
      try {
        await this.#sink.write(records);
      } catch (error) {
        if (!(error instanceof StoreUnavailableError)) throw error;
        this.#log.warn({ err: error.message, records: records.length }, 'store unavailable; will retry');
        // Nothing was stored: every key that carried a record is retried, with its status unchanged.
        return [
          ...fresh.map((outcome) => outcome.key),
          ...keys.filter((key) => key.startsWith('reconciler:') && this.#tombstones.has(key.slice('reconciler:'.length))),
        ];
      }
      for (const outcome of fresh) this.#stored.set(outcome.key, fingerprint(outcome.record!));
      for (const [key, record] of confirmations) this.#confirmedAt.set(key, record.observedAt.getTime());
      for (const key of keys) if (key.startsWith('reconciler:')) this.#tombstones.delete(key.slice('reconciler:'.length));
    }

    const retry: string[] = [];
    for (const outcome of outcomes) {
      const type = outcome.key.startsWith('descriptor:') ? DEPLOYMENT_DESCRIPTORS : RECONCILERS;
      try {
        await this.#status.write(type, outcome.object, outcome.condition, outcome.statusFields, now);
      } catch (error) {
        if (isNotFound(error)) continue;
        this.#log.warn({ key: outcome.key, err: (error as Error).message }, 'could not write status; will retry');
        retry.push(outcome.key);
      }
    }
    return retry;
  }

  #descriptor(key: string, object: KubeObject, now: Date): Outcome {
    const source = descriptorCommitSource(object);
    const kustomizationKey = source.kind === 'kustomization' ? `${source.namespace}/${source.name}` : undefined;
    const kustomization = kustomizationKey === undefined ? undefined : this.#get('kustomization', kustomizationKey);
    let applied: { revision: string; at: Date } | undefined;
    if (kustomizationKey !== undefined && kustomization !== undefined) {
      const reported = kustomizationAppliedAt(kustomization, object, now);
      if (!reported.ok) {
        // A descriptor at fault says so at once; a valid one waits for the Kustomization's report.
        const valid = normalizeDescriptorResource(object, { revision: 'pending', at: now }, now);
        const condition = valid.ok
          ? { ready: false, reason: 'WaitingForKustomization', message: reported.reason }
          : { ready: false, reason: 'Invalid', message: valid.reason };
        return { key, object, record: undefined, condition };
      }
      const known = this.#appliedAt.get(kustomizationKey);
      applied = known?.revision === reported.value.revision ? known : reported.value;
      this.#appliedAt.set(kustomizationKey, applied);
    }
    const outcome = normalizeDescriptorResource(object, applied, now);
    if (outcome.ok) {
      const record = outcome.value;
      return {
        key,
        object,
        record,
        condition: {
          ready: true,
          reason: 'Recorded',
          message: `${record.workload.name} ${record.workloadVersion.version} assigned to ${record.environment}/${record.deploymentTarget.name} at ${record.commitId}`,
        },
        statusFields: { gitOpsCommitId: record.commitId },
      };
    }
    const reason = outcome.reason;
    // Valid but for the commit: the Kustomization has not applied (or not reported) a revision yet.
    const waiting =
      source.kind !== 'spec' && normalizeDescriptorResource(object, { revision: 'pending', at: now }, now).ok
        ? source.kind === 'kustomization'
          ? kustomization === undefined
            ? `waiting for Kustomization ${source.namespace}/${source.name}`
            : `waiting for status.lastAppliedRevision of Kustomization ${source.namespace}/${source.name}`
          : reason
        : undefined;
    return {
      key,
      object,
      record: undefined,
      condition:
        waiting === undefined
          ? { ready: false, reason: 'Invalid', message: reason }
          : { ready: false, reason: source.kind === 'kustomization' ? 'WaitingForKustomization' : 'NoGitOpsCommit', message: waiting },
    };
  }

  #reconciler(key: string, object: KubeObject, now: Date): Outcome {
    const outcome = normalizeReconcilerResource(object, now);
    if (outcome.ok) {
      const record = outcome.value;
      return {
        key,
        object,
        record,
        condition: { ready: true, reason: 'Recorded', message: `${record.status} at ${record.commitId} recorded for ${record.host.name}` },
      };
    }
    return { key, object, record: undefined, condition: { ready: false, reason: 'Invalid', message: outcome.reason } };
  }

  /**
   * Asks the API server for every Reconciler, and queues them: those without a heartbeat are
   * confirmed at the time of asking (#confirmations). A resource that holds is written once, and an
   * API server ignores re-applies of it, so this is what keeps it fresh; when the hub cannot ask,
   * nothing is confirmed and the reconcilers turn stale, as they should while the hub is blind.
   */
  async #vouch(): Promise<void> {
    // A list slower than the interval is not asked again on top of itself.
    if (this.#vouching) return;
    this.#vouching = true;
    try {
      await this.#vouchNow();
    } finally {
      this.#vouching = false;
    }
  }

  async #vouchNow(): Promise<void> {
    const at = this.#options.clock();
    const namespaces = this.#options.namespaces.length === 0 ? [undefined] : this.#options.namespaces;
    let listed: KubeObject[];
    try {
      listed = (await Promise.all(namespaces.map((namespace) => this.#list(RECONCILERS, namespace)))).flatMap((list) => list.items);
    } catch (error) {
      this.#log.warn({ err: (error as Error).message }, 'could not list Reconcilers to confirm them; they turn stale if this lasts');
      return;
    }
    if (this.#stopped) return;
    this.#vouched = { at, versions: new Map(listed.map((object) => [`reconciler:${objectKey(object)}`, object.metadata.resourceVersion])) };
    for (const object of listed) this.#queue.add(`reconciler:${objectKey(object)}`);
  }

  /**
   * Reconciler resources without a heartbeat that the API server's latest list vouched for, as the
   * hub has them (same resourceVersion: a change on its way is not confirmed), not yet confirmed
   * at that time.
   */
  #confirmations(outcomes: readonly Outcome[]): [string, RealStateRecord][] {
    const vouched = this.#vouched;
    if (vouched === undefined) return [];
    const confirmations: [string, RealStateRecord][] = [];
    for (const outcome of outcomes) {
      const record = outcome.record;
      if (record?.kind !== 'real-state' || declaresHeartbeat(outcome.object) || record.observedAt >= vouched.at) continue;
      if (!vouched.versions.has(outcome.key) || vouched.versions.get(outcome.key) !== outcome.object.metadata.resourceVersion) continue;
      if ((this.#confirmedAt.get(outcome.key) ?? -Infinity) >= vouched.at.getTime()) continue;
      confirmations.push([outcome.key, { ...record, observedAt: vouched.at }]);
    }
    return confirmations;
  }

  /**
   * A change the hub learns of after it confirmed the state before: the API server may have taken
   * it a moment before that confirmation (the watch event was on its way, or the clocks differ).
   * It is placed just after the confirmation, so that it becomes the current state, not a late one.
   */
  #afterConfirmation(key: string, record: NormalizedRecord): NormalizedRecord {
    const confirmed = this.#confirmedAt.get(key);
    if (record.kind !== 'real-state' || confirmed === undefined || record.observedAt.getTime() > confirmed) return record;
    return { ...record, observedAt: new Date(confirmed + 1) };
  }

  #removal(key: string, now: Date): NormalizedRecord | undefined {
    const previous = this.#tombstones.get(key);
    if (previous === undefined) return undefined;
    const outcome = normalizeReconcilerResource(previous, now);
    if (!outcome.ok) {
      this.#tombstones.delete(key);
      return undefined;
    }
    this.#stored.delete(`reconciler:${key}`);
    this.#confirmedAt.delete(`reconciler:${key}`);
    return { kind: 'reconciler-removed', host: outcome.value.host.name, reconciler: outcome.value.reconciler.name, removedAt: now };
  }

  async #removePoller(key: string): Promise<void> {
    this.#graphPollers.delete(key);
    await this.#pollers.remove(key);
  }

  async #reconcileGraph(key: string, object: KubeObject | undefined): Promise<void> {
    if (object === undefined) {
      await this.#removePoller(key);
      return;
    }
    const parsed = parseResourceGraphSpec(key, object.spec);
    const write = (condition: ReadyCondition, fields?: Record<string, unknown>): void => {
      // The poller reports from its own loop; read the object afresh so that the write compares
      // against (and keeps) its latest status.
      const latest = this.#get('graph', key) ?? object;
      this.#status.write(AZURE_RESOURCE_GRAPHS, latest, condition, fields).catch((error: unknown) => {
        if (!isNotFound(error)) this.#log.warn({ key, err: (error as Error).message }, 'could not write status');
      });
    };
    if (!parsed.ok) {
      await this.#removePoller(key);
      write({ ready: false, reason: 'Invalid', message: parsed.reason });
      return;
    }
    this.#graphPollers.add(key);
    this.#pollers.upsert(parsed.value, (status) =>
      write(
        { ready: status.ready, reason: status.reason, message: status.message },
        {
          ...(status.lastPollTime === undefined ? {} : { lastPollTime: status.lastPollTime.toISOString() }),
          ...(status.rowsSeen === undefined ? {} : { rowsSeen: status.rowsSeen }),
        },
      ),
    );
  }
}

function fingerprint(record: NormalizedRecord): string {
  return JSON.stringify(record);
}
