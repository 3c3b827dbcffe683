// A reconciler's real-state report as an OTLP log record (`kalypso.deployment.state`, CONTRACT
// 3.1): attributes → the fields of normalizeRealState, honouring the documented fallbacks.
import type { Normalized } from './normalize-result.ts';
import { type Field, normalizeRealState, type RealStateFields } from './real-state.ts';

/** Looks an attribute up on the record first, then on its resource. */
export type AttributeLookup = (key: string) => unknown;

export function normalizeStateReport(attribute: AttributeLookup, body: unknown, observedAt: Date): Normalized {
  const host = either(attribute, 'k8s.cluster.name', 'host.name');
  return normalizeRealState({
    host: host.value === undefined ? { name: 'resource attribute k8s.cluster.name (or host.name)', value: undefined } : host,
    hostType: field(attribute, 'kalypso.host.type'),
    reconcilerName: field(attribute, 'kalypso.reconciler.name'),
    reconcilerType: field(attribute, 'kalypso.reconciler.type'),
    endpoint: endpointFields(attribute),
    storageType: field(attribute, 'kalypso.manifests.storage_type'),
    commit: either(attribute, 'vcs.ref.head.revision', 'kalypso.gitops.commit_id'),
    status: either(attribute, 'kalypso.deployment.status', 'deployment.status'),
    message: body,
    observedAt,
  });
}

// Plain functions rather than closures over the lookup: this runs for every report of a replay.
function field(attribute: AttributeLookup, name: string): Field {
  return { name, value: attribute(name) };
}

/** The first of two keys that is present (or, when neither is, the first one). */
function either(attribute: AttributeLookup, first: string, second: string): Field {
  const value = attribute(first);
  if (value !== undefined) return { name: first, value };
  const fallback = attribute(second);
  return fallback !== undefined ? { name: second, value: fallback } : { name: first, value: undefined };
}

/** One endpoint attribute, or the repository, branch and path of the VCS conventions. */
function endpointFields(attribute: AttributeLookup): RealStateFields['endpoint'] {
  const endpoint = attribute('kalypso.manifests.endpoint');
  if (endpoint !== undefined || attribute('vcs.repository.url.full') === undefined) return { name: 'kalypso.manifests.endpoint', value: endpoint };
  return { repo: field(attribute, 'vcs.repository.url.full'), branch: field(attribute, 'vcs.ref.head.name'), path: field(attribute, 'kalypso.manifests.path') };
}
