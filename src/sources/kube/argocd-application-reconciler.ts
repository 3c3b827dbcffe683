// One Argo CD Application at a time, through the mapping OTLP uses too (normalize/argocd-application.ts).
// The watcher writes nothing back (Applications are Argo CD's), so what it cannot map is logged,
// once per version of the object. What it stores: a new state of any of its reconcilers, and the
// removal of those it no longer maps to — all of them when it is deleted, those left behind when
// its destination or its sources change.
import type { Logger } from '../../log/logger.ts';
import type { NormalizedRecord, ReconcilerRemovedRecord } from '../../model/deployment-records.ts';
import { normalizeArgoApplication, type ReconcilerRef } from '../../normalize/argocd-application.ts';
import type { KubeObject } from '../../wire/kube-object.ts';
import { type KindReconciler, LastStored, type Reconciled } from './kind-reconciler.ts';

export class ArgoApplicationReconciler implements KindReconciler {
  readonly #clusterName: string;
  readonly #log: Logger;
  readonly #stored = new LastStored();
  /** The reconcilers each application mapped to when last stored. */
  readonly #mapped = new Map<string, readonly ReconcilerRef[]>();
  /** Deleted since they were last processed: what to take out of the store. */
  readonly #tombstones = new Map<string, KubeObject>();
  /** The resourceVersion last refused per application, so that a refusal is logged once. */
  readonly #refused = new Map<string, string | undefined>();

  constructor(clusterName: string, log: Logger) {
    this.#clusterName = clusterName;
    this.#log = log;
  }

  /** What the informers saw; `previous` of a deletion is what to take out of the store. */
  changed(key: string, object: KubeObject | undefined, previous: KubeObject | undefined): void {
    if (object !== undefined) this.#tombstones.delete(key);
    else if (previous !== undefined) this.#tombstones.set(key, previous);
  }

  reconcile(key: string, object: KubeObject | undefined, now: Date): Reconciled | undefined {
    if (object === undefined) return this.#removal(key, now);
    const outcome = normalizeArgoApplication({ object, event: 'upsert', localCluster: this.#clusterName, seenAt: now });
    if (!outcome.ok) {
      if (this.#refused.get(key) !== object.metadata.resourceVersion) this.#log.warn({ application: key, reason: outcome.reason }, 'cannot map Argo CD Application');
      this.#refused.set(key, object.metadata.resourceVersion);
      return undefined;
    }
    this.#refused.delete(key);
    const { records, reconcilers } = outcome.value;
    const left = (this.#mapped.get(key) ?? []).filter((before) => !reconcilers.some((ref) => sameReconciler(ref, before)));
    if (left.length === 0 && !this.#stored.isNew(key, records)) return undefined;
    return {
      records: [...records, ...left.map((ref) => removal(ref, now))],
      stored: () => {
        this.#stored.remember(key, records);
        this.#mapped.set(key, reconcilers);
      },
    };
  }

  #removal(key: string, now: Date): Reconciled | undefined {
    const previous = this.#tombstones.get(key);
    if (previous === undefined) return undefined;
    const outcome = normalizeArgoApplication({ object: previous, event: 'deleted', localCluster: this.#clusterName, seenAt: now });
    const refs = [...(this.#mapped.get(key) ?? []), ...(outcome.ok ? outcome.value.reconcilers : [])];
    const unique = refs.filter((ref, index) => refs.findIndex((other) => sameReconciler(ref, other)) === index);
    const forget = (): void => {
      this.#tombstones.delete(key);
      this.#stored.forget(key);
      this.#mapped.delete(key);
      this.#refused.delete(key);
    };
    // Never mapped: nothing of it is stored.
    if (unique.length === 0) {
      forget();
      return undefined;
    }
    return { records: unique.map((ref): NormalizedRecord => removal(ref, now)), stored: forget };
  }
}

function sameReconciler(a: ReconcilerRef, b: ReconcilerRef): boolean {
  return a.host === b.host && a.reconciler === b.reconciler;
}

function removal(ref: ReconcilerRef, at: Date): ReconcilerRemovedRecord {
  return { kind: 'reconciler-removed', host: ref.host, reconciler: ref.reconciler, removedAt: at };
}
