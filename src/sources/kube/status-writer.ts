// Writes the hub's view of a resource back to its status: a `Ready` condition (True, or False
// with the reason and a message naming the bad field) plus kind-specific fields. A merge patch of
// the status subresource; skipped when nothing would change, so the watch event our own write
// causes does not lead to another write.
import { type CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { PollReason } from '../resource-graph/resource-graph-pollers.ts';
import type { ResourceType } from './kube-objects.ts';
import type { KubeObject } from '../../wire/kube-object.ts';
import type { ReadyReason } from './ready-reasons.ts';

export interface ReadyCondition {
  readonly ready: boolean;
  readonly reason: ReadyReason | PollReason;
  readonly message: string;
}

interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

export class StatusWriter {
  readonly #api: CustomObjectsApi;

  constructor(api: CustomObjectsApi) {
    this.#api = api;
  }

  /** Patches the status when it differs; returns whether a write happened. */
  async write(
    type: ResourceType,
    object: KubeObject,
    condition: ReadyCondition,
    fields: Readonly<Record<string, unknown>> = {},
    now: Date = new Date(),
  ): Promise<boolean> {
    const current = (typeof object.status === 'object' && object.status !== null ? object.status : {}) as Record<string, unknown>;
    const conditions = Array.isArray(current['conditions']) ? (current['conditions'] as Condition[]) : [];
    const previous = conditions.find((entry) => entry.type === 'Ready');
    const status = condition.ready ? 'True' : 'False';
    const generation = object.metadata.generation;
    const unchanged =
      previous?.status === status &&
      previous.reason === condition.reason &&
      previous.message === condition.message &&
      previous.observedGeneration === generation &&
      Object.entries(fields).every(([key, value]) => JSON.stringify(current[key]) === JSON.stringify(value));
    if (unchanged) return false;
    const ready: Condition = {
      type: 'Ready',
      status,
      reason: condition.reason,
      message: condition.message,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      // The transition time moves only when the status itself changes.
      lastTransitionTime: previous?.status === status && previous.lastTransitionTime !== undefined ? previous.lastTransitionTime : now.toISOString(),
    };
    await this.#api.patchNamespacedCustomObjectStatus(
      {
        group: type.group,
        version: type.version,
        plural: type.plural,
        namespace: object.metadata.namespace ?? '',
        name: object.metadata.name ?? '',
        body: {
          status: {
            ...fields,
            ...(generation === undefined ? {} : { observedGeneration: generation }),
            conditions: [...conditions.filter((entry) => entry.type !== 'Ready'), ready],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    return true;
  }
}

/** Whether an error from the API client is "the object is gone" (404). */
export function isNotFound(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 404;
}
