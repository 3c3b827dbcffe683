// DeploymentDescriptor resources → desired state. A descriptor names its GitOps commit in its
// spec, or takes it from the Flux Kustomization that applied it (its labels name it): then it waits
// until that Kustomization reports the revision, and is assigned when the revision was applied.
import type { DesiredStateRecord } from '../../model/deployment-records.ts';
import {
  descriptorCommitSource,
  type KustomizationApplied,
  kustomizationAppliedAt,
  normalizeDescriptorResource,
} from '../../normalize/kube-resources.ts';
import { DEPLOYMENT_DESCRIPTORS } from './kube-objects.ts';
import type { KubeObject } from '../../wire/kube-object.ts';
import { type KindReconciler, LastStored, type Reconciled } from './kind-reconciler.ts';
import { READY_REASON } from './ready-reasons.ts';
import type { ReadyCondition } from './status-writer.ts';

type Judged = { readonly record: DesiredStateRecord; readonly condition: ReadyCondition } | { readonly record?: undefined; readonly condition: ReadyCondition };

export class DescriptorReconciler implements KindReconciler {
  /** The Kustomizations as the informers have them. */
  readonly #kustomization: (key: string) => KubeObject | undefined;
  /**
   * When each Kustomization applied its last applied revision, as first established: Flux moves
   * the Ready transition on every interval, but an assignment's time must not move with it.
   */
  readonly #firstApplied = new Map<string, KustomizationApplied>();
  readonly #stored = new LastStored();

  constructor(kustomization: (key: string) => KubeObject | undefined) {
    this.#kustomization = kustomization;
  }

  reconcile(key: string, object: KubeObject | undefined, now: Date): Reconciled | undefined {
    // A deleted descriptor takes nothing back: what was assigned stays in the history.
    if (object === undefined) return undefined;
    const { record, condition } = this.#judge(object, now);
    const fields = record === undefined ? undefined : { gitOpsCommitId: record.commitId };
    const status = { type: DEPLOYMENT_DESCRIPTORS, object, condition, ...(fields === undefined ? {} : { fields }) };
    if (record === undefined || !this.#stored.isNew(key, record)) return { records: [], status };
    return { records: [record], stored: () => this.#stored.remember(key, record), status };
  }

  #judge(object: KubeObject, now: Date): Judged {
    const source = descriptorCommitSource(object);
    if (source.kind !== 'kustomization') {
      const outcome = normalizeDescriptorResource(object, undefined, now);
      return outcome.ok ? recorded(outcome.value) : invalid(outcome.reason);
    }
    const kustomizationKey = `${source.namespace}/${source.name}`;
    const kustomization = this.#kustomization(kustomizationKey);
    if (kustomization === undefined) return waitingUnlessInvalid(object, now, `waiting for Kustomization ${kustomizationKey}`);
    const reported = kustomizationAppliedAt(kustomization, object, now);
    if (!reported.ok) return waitingUnlessInvalid(object, now, reported.reason);
    const known = this.#firstApplied.get(kustomizationKey);
    const applied = known?.revision === reported.value.revision ? known : reported.value;
    this.#firstApplied.set(kustomizationKey, applied);
    const outcome = normalizeDescriptorResource(object, applied, now);
    // Refused with a revision: either the descriptor is at fault, or the revision is not a commit.
    return outcome.ok ? recorded(outcome.value) : waitingUnlessInvalid(object, now, `waiting for status.lastAppliedRevision of Kustomization ${kustomizationKey}`);
  }
}

/**
 * A descriptor at fault says so at once, naming the field (checked with a stand-in commit, the
 * commit field being checked last); a valid one waits for its Kustomization's report.
 */
function waitingUnlessInvalid(object: KubeObject, now: Date, why: string): Judged {
  const valid = normalizeDescriptorResource(object, { revision: 'pending', at: now }, now);
  return valid.ok ? { condition: { ready: false, reason: READY_REASON.waitingForKustomization, message: why } } : invalid(valid.reason);
}

function recorded(record: DesiredStateRecord): Judged {
  return {
    record,
    condition: {
      ready: true,
      reason: READY_REASON.recorded,
      message: `${record.workload.name} ${record.workloadVersion.version} assigned to ${record.environment}/${record.deploymentTarget.name} at ${record.commitId}`,
    },
  };
}

function invalid(reason: string): Judged {
  return { condition: { ready: false, reason: READY_REASON.invalid, message: reason } };
}
