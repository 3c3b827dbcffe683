// A deployment descriptor (the `DeploymentDescriptor` resource's spec, also carried by
// `kalypso.deployment.descriptor` log records) → DesiredStateRecord. Shared by every source
// that carries descriptors, so they are validated the same way wherever they come from.
import { canonicalCommitId } from '../model/commit-id.ts';
import { DEFAULT_STORAGE_TYPE, type DesiredStateRecord } from '../model/deployment-records.ts';
import { manifestsOf } from '../model/manifests-endpoint.ts';
import { describeType, FIELD_LIMITS, FieldReader } from './field-reader.ts';
import { ok, refused } from '../model/result.ts';
import type { Normalized } from './normalize-result.ts';

export interface DescriptorContext {
  /** How the spec is named in error messages: `body` for log records, `spec` for resources. */
  readonly prefix: string;
  /**
   * The GitOps commit from outside the spec (a record attribute, a Flux Kustomization), if any:
   * unchecked, it is validated here like every other field.
   */
  readonly commitId: unknown;
  /** How that commit was named in the input, for error messages. */
  readonly commitField: string;
  readonly assignedAt: Date;
}

export function normalizeDescriptorSpec(spec: unknown, context: DescriptorContext): Normalized<DesiredStateRecord> {
  const read = new FieldReader();
  const at = (path: string): string => `${context.prefix}.${path}`;
  const map = (value: unknown, path: string): Record<string, unknown> => {
    if (value === undefined || value === null) return {};
    if (typeof value === 'object' && !Array.isArray(value) && !(value instanceof Uint8Array)) {
      return value as Record<string, unknown>;
    }
    read.fail(path, `must be a map, got ${describeType(value)}`);
    return {};
  };

  const root = map(spec, context.prefix);
  const workload = map(root['workload'], at('workload'));
  const source = map(workload['source'], at('workload.source'));
  const application = map(workload['application'], at('workload.application'));
  const workspace = map(application['workspace'], at('workload.application.workspace'));
  const target = map(root['deploymentTarget'], at('deploymentTarget'));
  const manifests = map(target['manifests'], at('deploymentTarget.manifests'));
  const version = map(root['workloadVersion'], at('workloadVersion'));

  const workloadName = read.requiredString(at('workload.name'), workload['name']);
  const sourceRepo = read.optionalString(at('workload.source.repo'), source['repo'], FIELD_LIMITS.endpoint);
  const sourceBranch = read.optionalString(at('workload.source.branch'), source['branch']);
  const sourcePath = read.optionalString(at('workload.source.path'), source['path'], FIELD_LIMITS.endpoint);
  const applicationName = read.requiredString(at('workload.application.name'), application['name']);
  const workspaceName = read.requiredString(at('workload.application.workspace.name'), workspace['name']);
  const targetName = read.requiredString(at('deploymentTarget.name'), target['name']);
  const environment = read.requiredString(at('deploymentTarget.environment'), target['environment']);
  const repo = read.requiredString(at('deploymentTarget.manifests.repo'), manifests['repo'], FIELD_LIMITS.endpoint);
  const branch = read.requiredString(at('deploymentTarget.manifests.branch'), manifests['branch']);
  const path = read.optionalString(at('deploymentTarget.manifests.path'), manifests['path'], FIELD_LIMITS.endpoint);
  const storageType =
    read.optionalToken(at('deploymentTarget.manifests.storageType'), manifests['storageType']) ?? DEFAULT_STORAGE_TYPE;
  const specCommit = read.optionalString(at('deploymentTarget.manifests.commit'), manifests['commit'], FIELD_LIMITS.commit);
  const versionName = read.requiredString(at('workloadVersion.version'), version['version'], FIELD_LIMITS.version);
  const build = read.optionalString(at('workloadVersion.build'), version['build'], FIELD_LIMITS.version) ?? '';
  const buildCommit = read.optionalString(at('workloadVersion.commit'), version['commit'], FIELD_LIMITS.commit);
  const buildTime = read.optionalTimestamp(at('workloadVersion.buildTime'), version['buildTime']);

  const outsideCommit = read.optionalString(context.commitField, context.commitId, FIELD_LIMITS.commit);
  const commit = outsideCommit ?? specCommit;
  if (commit === undefined) read.fail(`${context.commitField} (or ${at('deploymentTarget.manifests.commit')})`, 'is missing');

  if (read.problem !== undefined || commit === undefined) return refused(read.problem ?? 'commit is missing');
  return ok<DesiredStateRecord>({
    kind: 'desired-state',
    workspace: workspaceName,
    application: applicationName,
    workload: {
      name: workloadName,
      source:
        sourceRepo === undefined ? undefined : { repo: sourceRepo, branch: sourceBranch ?? '', path: sourcePath ?? '' },
    },
    environment,
    deploymentTarget: {
      name: targetName,
      manifests: { storageType, ...manifestsOf(repo, branch, path ?? '') },
    },
    workloadVersion: {
      version: versionName,
      build,
      commit: buildCommit === undefined ? undefined : canonicalCommitId(buildCommit),
      buildTime,
    },
    commitId: canonicalCommitId(commit),
    assignedAt: context.assignedAt,
  });
}
