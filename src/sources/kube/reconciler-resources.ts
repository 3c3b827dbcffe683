// Reconciler resources → real state. Two kinds of writer keep them: one that writes
// spec.lastHeartbeatTime (fresh as its last write, stale when the writes stop), and one that
// declares a state once, as the original hub's did: it holds while it exists, so the hub confirms
// it while it can see it (an API server ignores a re-apply of the same object, so nothing else
// would). A deleted one is taken out of the current state.
import type { Logger } from '../../log/logger.ts';
import type { NormalizedRecord, RealStateRecord } from '../../model/deployment-records.ts';
import { declaresHeartbeat, ORIGINAL_ARG_LABEL, type ReconcilerReading, readReconcilerResource } from '../../normalize/reconciler-resource.ts';
import { objectKey, RECONCILERS } from './kube-objects.ts';
import type { KubeObject } from '../../wire/kube-object.ts';
import { type KindReconciler, LastStored, type Reconciled } from './kind-reconciler.ts';
import { READY_REASON } from './ready-reasons.ts';
import type { ReadyCondition } from './status-writer.ts';

export interface ReconcilerResourcesOptions {
  /** Every Reconciler, asked of the API server (not of the informers' cache). */
  readonly list: () => Promise<readonly KubeObject[]>;
  /** Puts a Reconciler back on the work queue. */
  readonly requeue: (key: string) => void;
  /** Well inside stale-after, so that a resource that holds does not turn stale. */
  readonly confirmEveryMs: number;
  /** The hub's clock: confirmations are observations at its now. */
  readonly clock: () => Date;
}

export class ReconcilerResources implements KindReconciler {
  readonly #options: ReconcilerResourcesOptions;
  readonly #log: Logger;
  readonly #stored = new LastStored();
  /** Deleted since they were last processed: what to take out of the store. */
  readonly #tombstones = new Map<string, KubeObject>();
  /** When each was last confirmed, in ms. */
  readonly #confirmedAt = new Map<string, number>();
  /** The API server's latest list: when it was asked, and each one's resourceVersion. */
  #vouched: { readonly at: Date; readonly versions: ReadonlyMap<string, string | undefined> } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #vouching = false;
  #stopped = false;

  constructor(options: ReconcilerResourcesOptions, log: Logger) {
    this.#options = options;
    this.#log = log;
  }

  /** Starts confirming, at once and then every confirmEveryMs. */
  start(): void {
    this.#timer = setInterval(() => void this.#vouch(), this.#options.confirmEveryMs);
    this.#timer.unref();
    void this.#vouch();
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
  }

  /** What the informers saw; `previous` of a deletion is what to take out of the store. */
  changed(key: string, object: KubeObject | undefined, previous: KubeObject | undefined): void {
    if (object !== undefined) this.#tombstones.delete(key);
    else if (previous !== undefined) this.#tombstones.set(key, previous);
  }

  reconcile(key: string, object: KubeObject | undefined, now: Date): Reconciled | undefined {
    if (object === undefined) return this.#removal(key, now);
    const reading = readReconcilerResource(object, now);
    if (reading.kind !== 'recorded') return { records: [], status: { type: RECONCILERS, object, condition: notRecorded(reading, object) } };
    const { record, warnings } = reading;
    const recorded = `${record.status} at ${record.commitId} recorded for ${record.host.name}`;
    const status = {
      type: RECONCILERS,
      object,
      condition: { ready: true, reason: READY_REASON.recorded, message: warnings.length === 0 ? recorded : `${recorded}; warning: ${warnings.join('; ')}` },
    };
    const fresh = this.#stored.isNew(key, record);
    const confirmation = this.#confirmation(key, object, record);
    if (!fresh && confirmation === undefined) return { records: [], status };
    return {
      records: [...(fresh ? [this.#afterConfirmation(key, record)] : []), ...(confirmation === undefined ? [] : [confirmation])],
      stored: () => {
        if (fresh) this.#stored.remember(key, record);
        if (confirmation !== undefined) this.#confirmedAt.set(key, confirmation.observedAt.getTime());
      },
      status,
    };
  }

  #removal(key: string, now: Date): Reconciled | undefined {
    const previous = this.#tombstones.get(key);
    if (previous === undefined) return undefined;
    const reading = readReconcilerResource(previous, now);
    if (reading.kind !== 'recorded') {
      // It was never stored: nothing to take out.
      this.#tombstones.delete(key);
      return undefined;
    }
    const { record } = reading;
    const removal: NormalizedRecord = { kind: 'reconciler-removed', host: record.host.name, reconciler: record.reconciler.name, removedAt: now };
    return {
      records: [removal],
      stored: () => {
        this.#tombstones.delete(key);
        this.#stored.forget(key);
        this.#confirmedAt.delete(key);
      },
    };
  }

  /**
   * Asks the API server for every Reconciler and requeues them: those without a heartbeat are
   * confirmed at the time of asking (#confirmation). When the hub cannot ask, nothing is confirmed
   * and they turn stale, as they should while the hub is blind.
   */
  async #vouch(): Promise<void> {
    // A list slower than the interval is not asked again on top of itself.
    if (this.#vouching) return;
    this.#vouching = true;
    try {
      const at = this.#options.clock();
      let listed: readonly KubeObject[];
      try {
        listed = await this.#options.list();
      } catch (error) {
        this.#log.warn({ err: (error as Error).message }, 'could not list Reconcilers to confirm them; they turn stale if this lasts');
        return;
      }
      if (this.#stopped) return;
      this.#vouched = { at, versions: new Map(listed.map((object) => [objectKey(object), object.metadata.resourceVersion])) };
      for (const object of listed) this.#options.requeue(objectKey(object));
    } finally {
      this.#vouching = false;
    }
  }

  /**
   * A resource without a heartbeat that the API server's latest list vouched for, as the hub has
   * it (same resourceVersion: a change on its way is not confirmed), not yet confirmed at that time.
   */
  #confirmation(key: string, object: KubeObject, record: RealStateRecord): RealStateRecord | undefined {
    const vouched = this.#vouched;
    if (vouched === undefined || declaresHeartbeat(object) || record.observedAt >= vouched.at) return undefined;
    if (!vouched.versions.has(key) || vouched.versions.get(key) !== object.metadata.resourceVersion) return undefined;
    if ((this.#confirmedAt.get(key) ?? -Infinity) >= vouched.at.getTime()) return undefined;
    return { ...record, observedAt: vouched.at };
  }

  /**
   * A change the hub learns of after it confirmed the state before: the API server may have taken
   * it a moment before that confirmation (the watch event was on its way, or the clocks differ).
   * It is placed just after the confirmation, so that it becomes the current state, not a late one.
   */
  #afterConfirmation(key: string, record: RealStateRecord): RealStateRecord {
    const confirmed = this.#confirmedAt.get(key);
    if (confirmed === undefined || record.observedAt.getTime() > confirmed) return record;
    return { ...record, observedAt: new Date(confirmed + 1) };
  }
}

/** Why a Reconciler records nothing, as its Ready condition says it. */
function notRecorded(reading: Exclude<ReconcilerReading, { kind: 'recorded' }>, object: KubeObject): ReadyCondition {
  switch (reading.kind) {
    case 'invalid':
      return { ready: false, reason: READY_REASON.invalid, message: reading.reason };
    case 'waiting':
      return { ready: false, reason: READY_REASON.waitingForDeployment, message: reading.why };
    case 'resource-graph-copy':
      return {
        ready: false,
        reason: READY_REASON.resourceGraphCopy,
        message:
          `created by the original hub's AzureResourceGraph controller (${ORIGINAL_ARG_LABEL}=${reading.graph}): this hub polls Azure Resource Graph itself, ` +
          `so nothing is recorded from this resource; delete it: kubectl delete reconcilers -n ${object.metadata.namespace ?? 'default'} -l ${ORIGINAL_ARG_LABEL}`,
      };
  }
}
