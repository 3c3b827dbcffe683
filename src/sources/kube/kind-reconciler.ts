// What the controller asks of the reconciler of each kind: look at one object as the informers
// have it now (or at its absence) and say what to store and what to write on its status. The
// controller stores the records of a whole batch in one transaction, and only then writes the
// statuses, so that Ready=True never claims what the store does not have.
import type { NormalizedRecord } from '../../model/deployment-records.ts';
import type { ResourceType } from './kube-objects.ts';
import type { KubeObject } from '../../wire/kube-object.ts';
import type { ReadyCondition } from './status-writer.ts';

/** An entry of the work queue: which object to look at again. The object itself is read when its turn comes. */
export interface QueueKey {
  /** The reconciled kind's name (kind-setup.ts WatchedKind). */
  readonly kind: string;
  /** `namespace/name` */
  readonly key: string;
}

export const queueKeyId = (queued: QueueKey): string => `${queued.kind} ${queued.key}`;

export interface StatusUpdate {
  readonly type: ResourceType;
  readonly object: KubeObject;
  readonly condition: ReadyCondition;
  readonly fields?: Readonly<Record<string, unknown>>;
}

export interface Reconciled {
  /** To store; empty when the store has them already. */
  readonly records: readonly NormalizedRecord[];
  /** Called once the store took the records: what the reconciler remembers of them. */
  readonly stored?: () => void;
  /** Written after the records are stored. */
  readonly status?: StatusUpdate;
}

export interface KindReconciler {
  /** `object` undefined: the object was deleted. */
  reconcile(key: string, object: KubeObject | undefined, now: Date): Promise<Reconciled | undefined> | Reconciled | undefined;
}

/** What was last stored per object, so that resyncs and the hub's own status writes cost no transaction. */
export class LastStored {
  readonly #fingerprints = new Map<string, string>();

  isNew(key: string, record: NormalizedRecord | readonly NormalizedRecord[]): boolean {
    return this.#fingerprints.get(key) !== JSON.stringify(record);
  }

  remember(key: string, record: NormalizedRecord | readonly NormalizedRecord[]): void {
    this.#fingerprints.set(key, JSON.stringify(record));
  }

  forget(key: string): void {
    this.#fingerprints.delete(key);
  }
}
