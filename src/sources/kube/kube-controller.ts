// The CRD watcher's controller: informers for DeploymentDescriptors, Reconcilers,
// AzureResourceGraphs and Flux Kustomizations feed one work queue; each kind has its own
// reconciler (descriptor-reconciler, reconciler-resources, graph-reconciler). A batch's records
// are stored in one transaction, then the Ready conditions written on the resources.
import type { CustomObjectsApi, KubeConfig, KubernetesListObject } from '@kubernetes/client-node';
import type { Logger } from '../../log/logger.ts';
import { StoreUnavailableError } from '../../store/store-errors.ts';
import type { ResourceGraphPollers } from '../resource-graph/resource-graph-pollers.ts';
import type { RecordSink } from '../../model/record-sink.ts';
import { DescriptorReconciler } from './descriptor-reconciler.ts';
import { GraphReconciler } from './graph-reconciler.ts';
import { type QueueKey, queueKeyId, type Reconciled, type ReconciledKind } from './kind-reconciler.ts';
import { AZURE_RESOURCE_GRAPHS, collectionPath, DEPLOYMENT_DESCRIPTORS, FLUX_KUSTOMIZATIONS, RECONCILERS, type ResourceType } from './kube-objects.ts';
import type { KubeObject } from '../../wire/kube-object.ts';
import { KustomizationIndex } from './kustomization-index.ts';
import { KUBE_TUNING } from './kube-settings.ts';
import { ReconcilerResources } from './reconciler-resources.ts';
import { ResilientInformer } from './resilient-informer.ts';
import { isNotFound, StatusWriter } from './status-writer.ts';
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

type WatchedKind = ReconciledKind | 'kustomization';
const TYPES: Record<WatchedKind, ResourceType> = {
  descriptor: DEPLOYMENT_DESCRIPTORS,
  reconciler: RECONCILERS,
  graph: AZURE_RESOURCE_GRAPHS,
  kustomization: FLUX_KUSTOMIZATIONS,
};

export class KubeController {
  readonly #api: CustomObjectsApi;
  readonly #status: StatusWriter;
  readonly #sink: RecordSink;
  readonly #log: Logger;
  readonly #options: KubeControllerOptions;
  readonly #informers = new Map<WatchedKind, ResilientInformer[]>();
  readonly #queue: WorkQueue<QueueKey>;
  readonly #kustomizations = new KustomizationIndex();
  readonly #descriptors: DescriptorReconciler;
  readonly #reconcilers: ReconcilerResources;
  readonly #graphs: GraphReconciler;

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
    this.#log = log.child({ source: 'kube' });
    this.#options = options;
    this.#queue = new WorkQueue((keys) => this.#process(keys), { batchSize: KUBE_TUNING.queueBatchSize, batchDelayMs: KUBE_TUNING.queueBatchDelayMs, idOf: queueKeyId }, this.#log);
    this.#descriptors = new DescriptorReconciler((key) => this.#get('kustomization', key));
    this.#reconcilers = new ReconcilerResources(
      {
        list: async () => (await Promise.all(this.#namespaces().map((namespace) => this.#list(RECONCILERS, namespace)))).flatMap((list) => list.items),
        requeue: (key) => this.#queue.add({ kind: 'reconciler', key }),
        confirmEveryMs: options.confirmEveryMs,
        clock: options.clock,
      },
      this.#log,
    );
    this.#graphs = new GraphReconciler(pollers, this.#status, (key) => this.#get('graph', key), this.#log);
    for (const kind of Object.keys(TYPES) as WatchedKind[]) {
      const type = TYPES[kind];
      this.#informers.set(
        kind,
        this.#namespaces().map(
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
    await Promise.all(
      all.filter(([kind]) => kind !== 'kustomization').flatMap(([, informers]) => informers.map((informer) => informer.start())),
    );
    this.#reconcilers.start();
  }

  async stop(): Promise<void> {
    this.#reconcilers.stop();
    await Promise.all([...this.#informers.values()].flat().map((informer) => informer.stop()));
    await this.#queue.stop();
    await this.#graphs.stopAll();
  }

  /** Resolves when every queued change has been processed. */
  idle(): Promise<void> {
    return this.#queue.idle();
  }

  #namespaces(): readonly (string | undefined)[] {
    return this.#options.namespaces.length === 0 ? [undefined] : this.#options.namespaces;
  }

  #list(type: ResourceType, namespace: string | undefined): Promise<KubernetesListObject<KubeObject>> {
    const { group, version, plural } = type;
    return (
      namespace === undefined
        ? this.#api.listClusterCustomObject({ group, version, plural })
        : this.#api.listNamespacedCustomObject({ group, version, plural, namespace })
    ) as Promise<KubernetesListObject<KubeObject>>;
  }

  #changed(kind: WatchedKind, key: string, object: KubeObject | undefined, previous: KubeObject | undefined): void {
    switch (kind) {
      case 'kustomization':
        // Descriptors waiting for (or following) this Kustomization's revision are due again.
        for (const descriptor of this.#kustomizations.descriptorsOf(key)) this.#queue.add({ kind: 'descriptor', key: descriptor });
        return;
      case 'descriptor':
        this.#kustomizations.update(key, object);
        break;
      case 'reconciler':
        this.#reconcilers.changed(key, object, previous);
        break;
      case 'graph':
        break;
    }
    this.#queue.add({ kind, key });
  }

  #get(kind: WatchedKind, key: string): KubeObject | undefined {
    for (const informer of this.#informers.get(kind) ?? []) {
      const object = informer.get(key);
      if (object !== undefined) return object;
    }
    return undefined;
  }

  /** One batch: each object to its kind's reconciler; the records stored at once; then the statuses. Returns what to retry. */
  async #process(batch: readonly QueueKey[]): Promise<QueueKey[]> {
    const now = this.#options.clock();
    const reconciled: [QueueKey, Reconciled][] = [];
    for (const queued of batch) {
      const reconciler = queued.kind === 'descriptor' ? this.#descriptors : queued.kind === 'reconciler' ? this.#reconcilers : this.#graphs;
      const outcome = await reconciler.reconcile(queued.key, this.#get(queued.kind, queued.key), now);
      if (outcome !== undefined) reconciled.push([queued, outcome]);
    }

    const records = reconciled.flatMap(([, outcome]) => outcome.records);
    if (records.length > 0) {
      try {
        await this.#sink.write(records);
      } catch (error) {
        if (!(error instanceof StoreUnavailableError)) throw error;
        this.#log.warn({ err: error.message, records: records.length }, 'store unavailable; will retry');
        // Nothing was stored: every key that carried a record is retried, with its status unchanged.
        return reconciled.filter(([, outcome]) => outcome.records.length > 0).map(([queued]) => queued);
      }
      for (const [, outcome] of reconciled) outcome.stored?.();
    }

    const retry: QueueKey[] = [];
    for (const [queued, { status }] of reconciled) {
      if (status === undefined) continue;
      try {
        await this.#status.write(status.type, status.object, status.condition, status.fields, now);
      } catch (error) {
        if (isNotFound(error)) continue;
        this.#log.warn({ key: queued.key, kind: queued.kind, err: (error as Error).message }, 'could not write status; will retry');
        retry.push(queued);
      }
    }
    return retry;
  }
}
