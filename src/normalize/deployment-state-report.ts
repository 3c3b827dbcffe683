// A reconciler's real-state report (`kalypso.deployment.state`, CONTRACT 3.1) → RealStateRecord.
import { canonicalCommitId } from '../model/commit-id.ts';
import {
  DEPLOYMENT_STATUSES,
  DEFAULT_STORAGE_TYPE,
  RECONCILER_TYPES,
  type DeploymentStatus,
  type RealStateRecord,
} from '../model/deployment-records.ts';
import { composeManifestsEndpoint, normalizeManifestsEndpoint } from '../model/manifests-endpoint.ts';
import { FIELD_LIMITS, FieldReader } from './field-reader.ts';
import { accepted, type Normalized, rejected } from './normalize-result.ts';

/** Looks an attribute up on the record first, then on its resource. */
export type AttributeLookup = (key: string) => unknown;

/** The semantic-conventions spellings (`deployment.status`) mean the same as ours. */
const STATUS_ALIASES: Readonly<Record<string, DeploymentStatus>> = {
  succeeded: 'success',
  failed: 'failure',
  inprogress: 'in_progress',
  progressing: 'in_progress',
  pending: 'in_progress',
};

export function normalizeStateReport(attribute: AttributeLookup, body: unknown, observedAt: Date): Normalized {
  const read = new FieldReader();

  const hostKey = attribute('k8s.cluster.name') !== undefined ? 'k8s.cluster.name' : 'host.name';
  if (attribute(hostKey) === undefined) read.fail('k8s.cluster.name (or host.name)', 'is missing on the resource');
  const hostName = read.requiredString(hostKey, attribute(hostKey));
  const hostType = read.optionalToken('kalypso.host.type', attribute('kalypso.host.type'));
  const reconcilerName = read.requiredString('kalypso.reconciler.name', attribute('kalypso.reconciler.name'));
  const reconcilerType =
    read.optionalEnum('kalypso.reconciler.type', attribute('kalypso.reconciler.type'), RECONCILER_TYPES) ?? 'custom';
  const endpoint = manifestsEndpoint(read, attribute);
  const storageType =
    read.optionalToken('kalypso.manifests.storage_type', attribute('kalypso.manifests.storage_type')) ??
    DEFAULT_STORAGE_TYPE;
  const commitKey = attribute('vcs.ref.head.revision') !== undefined ? 'vcs.ref.head.revision' : 'kalypso.gitops.commit_id';
  const commit = read.requiredString(commitKey, attribute(commitKey), FIELD_LIMITS.commit);
  const statusKey = attribute('kalypso.deployment.status') !== undefined ? 'kalypso.deployment.status' : 'deployment.status';
  // A report without a status has not told us it succeeded: it never counts as success.
  const status = read.optionalEnum(statusKey, attribute(statusKey), DEPLOYMENT_STATUSES, STATUS_ALIASES) ?? 'in_progress';
  const statusMessage = read.message(body);

  if (read.problem !== undefined) return rejected(read.problem);
  return accepted<RealStateRecord>({
    kind: 'real-state',
    host: { name: hostName, type: hostType },
    reconciler: { name: reconcilerName, type: reconcilerType },
    manifests: { storageType, endpoint },
    commitId: canonicalCommitId(commit),
    status,
    statusMessage,
    observedAt,
  });
}

/** `kalypso.manifests.endpoint`, or the endpoint composed from the VCS semantic conventions. */
function manifestsEndpoint(read: FieldReader, attribute: AttributeLookup): string {
  const explicit = attribute('kalypso.manifests.endpoint');
  if (explicit !== undefined || attribute('vcs.repository.url.full') === undefined) {
    return normalizeManifestsEndpoint(
      read.requiredString('kalypso.manifests.endpoint', explicit, FIELD_LIMITS.endpoint),
    );
  }
  const repo = read.requiredString('vcs.repository.url.full', attribute('vcs.repository.url.full'), FIELD_LIMITS.endpoint);
  const branch = read.requiredString('vcs.ref.head.name', attribute('vcs.ref.head.name'));
  const path = read.optionalString('kalypso.manifests.path', attribute('kalypso.manifests.path'), FIELD_LIMITS.endpoint);
  return composeManifestsEndpoint(repo, branch, path ?? '');
}
