// How a Kubernetes kind joins the CRD watcher: it says which kind it reconciles, which other kinds
// it watches for it (and which of its objects a change of theirs makes due), what it keeps indexed,
// and its reconciler — all in one setup function, like a controller's SetupWithManager with
// For / Watches / IndexField. The controller (kube-controller.ts) knows no kind by name; the list
// of kinds is kube-kinds.ts.
import type { Logger } from '../../log/logger.ts';
import type { KubeObject } from '../../wire/kube-object.ts';
import type { ResourceGraphPollers } from '../resource-graph/resource-graph-pollers.ts';
import type { KindReconciler } from './kind-reconciler.ts';
import type { ResourceType } from './kube-objects.ts';
import type { KindSettings } from './kube-settings.ts';
import type { StatusWriter } from './status-writer.ts';

/** A kind the watcher keeps an informer for. */
export interface WatchedKind {
  /** Its name in the work queue and in the logs. */
  readonly name: string;
  readonly type: ResourceType;
  /**
   * Listed before the watcher counts as started: the hub's own kinds. Kinds of other projects
   * (Flux) may not be installed; their informers keep trying without holding the start up.
   */
  readonly required: boolean;
  /**
   * Watched only while the API server serves it: a 404 on list means it is not installed (not a
   * failure to warn of); the informer asks again every resync period.
   */
  readonly whenServed?: boolean;
}

/** Another kind watched for the one reconciled: a change of one of its objects makes these keys due. */
export interface KindWatch {
  readonly kind: WatchedKind;
  readonly due: (key: string, object: KubeObject | undefined) => readonly string[];
}

export interface KindController {
  /** The kind reconciled: an object of it is queued by its key whenever it changes. */
  readonly for: WatchedKind;
  readonly reconciler: KindReconciler;
  /** Each change of the kind, before it is queued: keeps indexes and what the reconciler tracks current. */
  readonly changed?: (key: string, object: KubeObject | undefined, previous: KubeObject | undefined) => void;
  readonly watches?: readonly KindWatch[];
  /** Once the informers have listed the required kinds. */
  readonly start?: () => void;
  /** After the work queue has drained. */
  readonly stop?: () => Promise<void> | void;
}

/** What the controller lends a kind's setup. */
export interface KindContext {
  /** An object of a watched kind as the informers have it now (by the kind's name). */
  get(kind: string, key: string): KubeObject | undefined;
  /** Every object of a type in the watched namespaces, asked of the API server (not the informers' cache). */
  list(type: ResourceType): Promise<readonly KubeObject[]>;
  /** Puts an object of a reconciled kind back on the work queue. */
  requeue(kind: string, key: string): void;
  readonly status: StatusWriter;
  readonly pollers: ResourceGraphPollers;
  /** The watcher's settings (whether to watch Argo CD, the watched cluster's name). */
  readonly settings: KindSettings;
  /** How often to confirm resources that hold without a heartbeat (see KubeControllerOptions). */
  readonly confirmEveryMs: number;
  readonly clock: () => Date;
  readonly log: Logger;
}

/** undefined: the kind is switched off by the settings. */
export type KindSetup = (context: KindContext) => KindController | undefined;
