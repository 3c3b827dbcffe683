// The fields of a real-state report, whatever its source (OTLP attributes, a Reconciler resource,
// an Azure Resource Graph row), → RealStateRecord. Each field carries the name it has in its
// source, so that a rejection names the field the sender wrote.
import { canonicalCommitId } from '../model/commit-id.ts';
import {
  DEFAULT_STORAGE_TYPE,
  DEPLOYMENT_STATUSES,
  type DeploymentStatus,
  RECONCILER_TYPES,
  type RealStateRecord,
} from '../model/deployment-records.ts';
import { manifestsOf, normalizeManifestsEndpoint } from '../model/manifests-endpoint.ts';
import { FIELD_LIMITS, FieldReader } from './field-reader.ts';
import { ok, refused } from '../model/result.ts';
import type { Normalized } from './normalize-result.ts';

export interface Field {
  /** The field's name in its source, e.g. `kalypso.reconciler.name` or `spec.hostName`. */
  readonly name: string;
  readonly value: unknown;
}

export interface RealStateFields {
  readonly host: Field;
  readonly hostType: Field;
  readonly reconcilerName: Field;
  readonly reconcilerType: Field;
  /** The endpoint as one string, or as repo + branch + path. */
  readonly endpoint: Field | { readonly repo: Field; readonly branch: Field; readonly path: Field };
  readonly storageType: Field;
  readonly commit: Field;
  readonly status: Field;
  readonly message: unknown;
  readonly observedAt: Date;
}

/** The semantic-conventions spellings (`deployment.status`) and common synonyms mean the same as ours. */
export const STATUS_ALIASES: Readonly<Record<string, DeploymentStatus>> = {
  succeeded: 'success',
  failed: 'failure',
  inprogress: 'in_progress',
  progressing: 'in_progress',
  pending: 'in_progress',
};

export function normalizeRealState(fields: RealStateFields): Normalized<RealStateRecord> {
  const read = new FieldReader();
  const text = (field: Field, max?: number) => read.requiredString(field.name, field.value, max);
  const hostName = text(fields.host);
  const hostType = read.optionalToken(fields.hostType.name, fields.hostType.value);
  const reconcilerName = text(fields.reconcilerName);
  const reconcilerType = read.optionalEnum(fields.reconcilerType.name, fields.reconcilerType.value, RECONCILER_TYPES) ?? 'custom';
  const manifests: { endpoint: string; branch?: string } =
    'name' in fields.endpoint
      ? { endpoint: normalizeManifestsEndpoint(text(fields.endpoint, FIELD_LIMITS.endpoint)) }
      : manifestsOf(
          text(fields.endpoint.repo, FIELD_LIMITS.endpoint),
          text(fields.endpoint.branch),
          read.optionalString(fields.endpoint.path.name, fields.endpoint.path.value, FIELD_LIMITS.endpoint) ?? '',
        );
  const storageType = read.optionalToken(fields.storageType.name, fields.storageType.value) ?? DEFAULT_STORAGE_TYPE;
  const commit = text(fields.commit, FIELD_LIMITS.commit);
  // A report without a status has not told us it succeeded: it never counts as success.
  const status = read.optionalEnum(fields.status.name, fields.status.value, DEPLOYMENT_STATUSES, STATUS_ALIASES) ?? 'in_progress';
  const statusMessage = read.message(fields.message);

  if (read.problem !== undefined) return refused(read.problem);
  return ok<RealStateRecord>({
    kind: 'real-state',
    host: { name: hostName, type: hostType },
    reconciler: { name: reconcilerName, type: reconcilerType },
    manifests: { storageType, ...manifests },
    commitId: canonicalCommitId(commit),
    status,
    statusMessage,
    observedAt: fields.observedAt,
  });
}
