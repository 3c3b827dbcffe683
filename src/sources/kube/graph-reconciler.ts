// AzureResourceGraph resources → Resource Graph poll loops. Each resource runs one loop, which
// reports every poll on the resource's Ready condition; a deleted or invalid resource stops its
// loop. Only this watcher's loops are its own: --arg-config sources run on every replica.
import type { Logger } from '../../log/logger.ts';
import { parseResourceGraphSpec } from '../../normalize/kube-resources.ts';
import type { PollStatus, ResourceGraphPollers } from '../resource-graph/resource-graph-pollers.ts';
import { AZURE_RESOURCE_GRAPHS } from './kube-objects.ts';
import type { KubeObject } from '../../wire/kube-object.ts';
import type { KindReconciler, Reconciled } from './kind-reconciler.ts';
import { READY_REASON } from './ready-reasons.ts';
import { isNotFound, type StatusWriter } from './status-writer.ts';

export class GraphReconciler implements KindReconciler {
  readonly #pollers: ResourceGraphPollers;
  readonly #status: StatusWriter;
  /** The resources as the informers have them now. */
  readonly #latest: (key: string) => KubeObject | undefined;
  readonly #log: Logger;
  readonly #running = new Set<string>();

  constructor(pollers: ResourceGraphPollers, status: StatusWriter, latest: (key: string) => KubeObject | undefined, log: Logger) {
    this.#pollers = pollers;
    this.#status = status;
    this.#latest = latest;
    this.#log = log;
  }

  async reconcile(key: string, object: KubeObject | undefined): Promise<Reconciled | undefined> {
    if (object === undefined) {
      await this.#remove(key);
      return undefined;
    }
    const parsed = parseResourceGraphSpec(key, object.spec);
    if (!parsed.ok) {
      await this.#remove(key);
      return { records: [], status: { type: AZURE_RESOURCE_GRAPHS, object, condition: { ready: false, reason: READY_REASON.invalid, message: parsed.reason } } };
    }
    this.#running.add(key);
    this.#pollers.upsert(parsed.value, (status) => this.#report(key, object, status));
    return undefined;
  }

  /** Stops this watcher's loops (it stopped leading, or the hub stops). */
  async stopAll(): Promise<void> {
    await Promise.all([...this.#running].map((key) => this.#remove(key)));
  }

  async #remove(key: string): Promise<void> {
    this.#running.delete(key);
    await this.#pollers.remove(key);
  }

  /** A poll's outcome, from the poll loop's own time. */
  #report(key: string, object: KubeObject, status: PollStatus): void {
    // Read the object afresh, so that the write compares against (and keeps) its latest status.
    const latest = this.#latest(key) ?? object;
    const fields = {
      ...(status.lastPollTime === undefined ? {} : { lastPollTime: status.lastPollTime.toISOString() }),
      ...(status.rowsSeen === undefined ? {} : { rowsSeen: status.rowsSeen }),
    };
    this.#status.write(AZURE_RESOURCE_GRAPHS, latest, { ready: status.ready, reason: status.reason, message: status.message }, fields).catch((error: unknown) => {
      if (!isNotFound(error)) this.#log.warn({ key, err: (error as Error).message }, 'could not write status');
    });
  }
}
