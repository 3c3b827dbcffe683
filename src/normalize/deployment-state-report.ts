// A reconciler's real-state report as an OTLP log record (`kalypso.deployment.state`, CONTRACT
// 3.1): attributes → the fields of normalizeRealState, honouring the documented fallbacks.
import type { Normalized } from './normalize-result.ts';
import { type Field, normalizeRealState } from './real-state.ts';

/** Looks an attribute up on the record first, then on its resource. */
export type AttributeLookup = (key: string) => unknown;

export function normalizeStateReport(attribute: AttributeLookup, body: unknown, observedAt: Date): Normalized {
  const field = (name: string): Field => ({ name, value: attribute(name) });
  /** The first of several keys that is present (or, when none is, the first one). */
  const either = (...names: string[]): Field => field(names.find((name) => attribute(name) !== undefined) ?? names[0]!);
  const host = either('k8s.cluster.name', 'host.name');
  return normalizeRealState({
    host: host.value === undefined ? { name: 'resource attribute k8s.cluster.name (or host.name)', value: undefined } : host,
    hostType: field('kalypso.host.type'),
    reconcilerName: field('kalypso.reconciler.name'),
    reconcilerType: field('kalypso.reconciler.type'),
    endpoint:
      attribute('kalypso.manifests.endpoint') === undefined && attribute('vcs.repository.url.full') !== undefined
        ? { repo: field('vcs.repository.url.full'), branch: field('vcs.ref.head.name'), path: field('kalypso.manifests.path') }
        : field('kalypso.manifests.endpoint'),
    storageType: field('kalypso.manifests.storage_type'),
    commit: either('vcs.ref.head.revision', 'kalypso.gitops.commit_id'),
    status: either('kalypso.deployment.status', 'deployment.status'),
    message: body,
    observedAt,
  });
}
