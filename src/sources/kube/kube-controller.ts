// The CRD watcher's controller: one informer per watched kind, namespace by namespace, feeding one
// work queue; each reconciled kind brings its own reconciler (kube-kinds.ts). A batch's records
// are stored in one transaction, then the Ready conditions written on the resources.
import type { CustomObjectsApi, KubeConfig, KubernetesListObject } from '@kubernetes/client-node';
import type { Logger } from '../../log/logger.ts';
import type { RecordSink } from '../../model/record-sink.ts';
import { StoreUnavailableError } from '../../store/store-errors.ts';
import type { KubeObject } from '../../wire/kube-object.ts';
import type { ResourceGraphPollers } from '../resource-graph/resource-graph-pollers.ts';
import { type QueueKey, queueKeyId, type Reconciled } from './kind-reconciler.ts';
import type { KindContext, KindController, KindSetup, WatchedKind } from './kind-setup.ts';
import { KUBE_KINDS } from './kube-kinds.ts';
import type { KubeMetrics } from './kube-metrics.ts';
import { collectionPath, type ResourceType } from './kube-objects.ts';
import { type KindSettings, KUBE_TUNING } from './kube-settings.ts';
import { ResilientInformer } from './resilient-informer.ts';
import { isNotFound, StatusWriter } from './status-writer.ts';
import { WorkQueue } from './work-queue.ts';

export interface KubeControllerOptions {
  /** Namespaces to watch; empty: all namespaces. */
  readonly namespaces: readonly string[];
  /** The settings the kinds read. */
  readonly kinds: KindSettings;
  readonly resyncMs: number;
  /**
   * How often the API server is asked for every Reconciler, to confirm those without a heartbeat:
   * well inside stale-after, so that a resource that holds does not turn stale.
   */
  readonly confirmEveryMs: number;
  /** The hub's clock: confirmations are observations at its now. */
  readonly clock: () => Date;
  readonly metrics?: KubeMetrics;
}

type ChangeHandler = (key: string, object: KubeObject | undefined, previous: KubeObject | undefined) => void;

/** A watched kind's informers (one per namespace) and who hears of its changes. */
interface Watch {
  readonly kind: WatchedKind;
  readonly informers: ResilientInformer[];
  readonly handlers: ChangeHandler[];
}

export class KubeController {
  readonly #api: CustomObjectsApi;
  readonly #status: StatusWriter;
  readonly #sink: RecordSink;
  readonly #log: Logger;
  readonly #options: KubeControllerOptions;
  readonly #watches = new Map<string, Watch>();
  readonly #controllers = new Map<string, KindController>();
  readonly #queue: WorkQueue<QueueKey>;

  constructor(
    kubeConfig: KubeConfig,
    api: CustomObjectsApi,
    sink: RecordSink,
    pollers: ResourceGraphPollers,
    options: KubeControllerOptions,
    log: Logger,
    kinds: readonly KindSetup[] = KUBE_KINDS,
  ) {
    this.#api = api;
    this.#status = new StatusWriter(api);
    this.#sink = sink;
    this.#log = log.child({ source: 'kube' });
    this.#options = options;
    this.#queue = new WorkQueue(
      (keys) => this.#process(keys),
      { batchSize: KUBE_TUNING.queueBatchSize, batchDelayMs: KUBE_TUNING.queueBatchDelayMs, idOf: queueKeyId },
      this.#log,
    );
    const context = this.#context(pollers);
    for (const setup of kinds) {
      const controller = setup(context);
      if (controller !== undefined) this.#register(controller, kubeConfig);
    }
  }

  /** Starts every informer; resolves when the required kinds are listed (Flux may be absent). */
  async start(): Promise<void> {
    const watches = [...this.#watches.values()];
    for (const watch of watches) for (const informer of watch.informers) void informer.start();
    await Promise.all(watches.filter((watch) => watch.kind.required).flatMap((watch) => watch.informers.map((informer) => informer.start())));
    for (const controller of this.#controllers.values()) controller.start?.();
  }

  async stop(): Promise<void> {
    await Promise.all([...this.#watches.values()].flatMap((watch) => watch.informers.map((informer) => informer.stop())));
    await this.#queue.stop();
    for (const controller of this.#controllers.values()) await controller.stop?.();
  }

  /** Resolves when every queued change has been processed. */
  idle(): Promise<void> {
    return this.#queue.idle();
  }

  #context(pollers: ResourceGraphPollers): KindContext {
    return {
      get: (kind, key) => this.#get(kind, key),
      list: async (type) => (await Promise.all(this.#namespaces().map((namespace) => this.#list(type, namespace)))).flatMap((list) => list.items),
      requeue: (kind, key) => this.#queue.add({ kind, key }),
      status: this.#status,
      pollers,
      settings: this.#options.kinds,
      confirmEveryMs: this.#options.confirmEveryMs,
      clock: this.#options.clock,
      log: this.#log,
    };
  }

  /** The kind's own changes queue its objects; a watched kind's changes queue the objects they make due. */
  #register(controller: KindController, kubeConfig: KubeConfig): void {
    const kind = controller.for.name;
    if (this.#controllers.has(kind)) throw new Error(`kind ${kind} is set up twice`);
    this.#controllers.set(kind, controller);
    this.#watch(controller.for, kubeConfig).handlers.push((key, object, previous) => {
      controller.changed?.(key, object, previous);
      this.#queue.add({ kind, key });
    });
    for (const { kind: watched, due } of controller.watches ?? []) {
      this.#watch(watched, kubeConfig).handlers.push((key, object) => {
        for (const dueKey of due(key, object)) this.#queue.add({ kind, key: dueKey });
      });
    }
  }

  /** The informers of a kind, made the first time any setup asks for it. */
  #watch(kind: WatchedKind, kubeConfig: KubeConfig): Watch {
    const existing = this.#watches.get(kind.name);
    if (existing !== undefined) return existing;
    const handlers: ChangeHandler[] = [];
    const informers = this.#namespaces().map(
      (namespace) =>
        new ResilientInformer(
          kubeConfig,
          {
            name: `${kind.type.plural}${namespace === undefined ? '' : `@${namespace}`}`,
            path: collectionPath(kind.type, namespace),
            list: () => this.#list(kind.type, namespace),
            resyncMs: this.#options.resyncMs,
            whenServed: kind.whenServed === true,
            onChange: (key, object, previous) => {
              for (const handler of handlers) handler(key, object, previous);
            },
            onError: () => this.#options.metrics?.watchErrors.inc({ resource: kind.type.plural }),
          },
          this.#log,
        ),
    );
    const watch = { kind, informers, handlers };
    this.#watches.set(kind.name, watch);
    return watch;
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

  #get(kind: string, key: string): KubeObject | undefined {
    for (const informer of this.#watches.get(kind)?.informers ?? []) {
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
      const controller = this.#controllers.get(queued.kind)!;
      const outcome = await controller.reconciler.reconcile(queued.key, this.#get(queued.kind, queued.key), now);
      if (outcome !== undefined) reconciled.push([queued, outcome]);
    }
    const stored = await this.#store(reconciled);
    return stored === 'retry' ? reconciled.filter(([, outcome]) => outcome.records.length > 0).map(([queued]) => queued) : await this.#writeStatuses(reconciled, now);
  }

  /** The batch's records in one transaction; 'retry' when the store cannot take them now (nothing was stored). */
  async #store(reconciled: readonly (readonly [QueueKey, Reconciled])[]): Promise<'stored' | 'retry'> {
    const records = reconciled.flatMap(([, outcome]) => outcome.records);
    if (records.length === 0) return 'stored';
    try {
      await this.#sink.write(records);
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      this.#log.warn({ err: error.message, records: records.length }, 'store unavailable; will retry');
      // Every key that carried a record is retried, with its status unchanged.
      return 'retry';
    }
    for (const [, outcome] of reconciled) outcome.stored?.();
    return 'stored';
  }

  /** The Ready conditions, once the records are stored; returns the keys whose status could not be written. */
  async #writeStatuses(reconciled: readonly (readonly [QueueKey, Reconciled])[], now: Date): Promise<QueueKey[]> {
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
