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
  // Every section before any field: of several problems, the reader keeps the first it finds.
  const sections = readSections(read, spec, context.prefix, at);
  const workload = readWorkloadFields(read, sections, at);
  const target = readTargetFields(read, sections, at);
  const version = readVersionFields(read, sections, at);

  const outsideCommit = read.optionalString(context.commitField, context.commitId, FIELD_LIMITS.commit);
  const commit = outsideCommit ?? target.specCommit;
  if (commit === undefined) read.fail(`${context.commitField} (or ${at('deploymentTarget.manifests.commit')})`, 'is missing');

  if (read.problem !== undefined || commit === undefined) return refused(read.problem ?? 'commit is missing');
  return ok<DesiredStateRecord>({
    kind: 'desired-state',
    workspace: workload.workspaceName,
    application: workload.applicationName,
    workload: {
      name: workload.workloadName,
      source:
        workload.sourceRepo === undefined ? undefined : { repo: workload.sourceRepo, branch: workload.sourceBranch ?? '', path: workload.sourcePath ?? '' },
    },
    environment: target.environment,
    deploymentTarget: {
      name: target.targetName,
      manifests: { storageType: target.storageType, ...manifestsOf(target.repo, target.branch, target.path ?? '') },
    },
    workloadVersion: {
      version: version.versionName,
      build: version.build,
      commit: version.buildCommit === undefined ? undefined : canonicalCommitId(version.buildCommit),
      buildTime: version.buildTime,
    },
    commitId: canonicalCommitId(commit),
    assignedAt: context.assignedAt,
  });
}

/** A field's path in error messages, under the spec's prefix. */
type FieldPath = (path: string) => string;

/** The maps of a descriptor: each {} when absent, or (with a recorded problem) when not a map. */
interface DescriptorSections {
  readonly workload: Record<string, unknown>;
  readonly source: Record<string, unknown>;
  readonly application: Record<string, unknown>;
  readonly workspace: Record<string, unknown>;
  readonly target: Record<string, unknown>;
  readonly manifests: Record<string, unknown>;
  readonly version: Record<string, unknown>;
}

function readSection(read: FieldReader, value: unknown, path: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value === 'object' && !Array.isArray(value) && !(value instanceof Uint8Array)) {
    return value as Record<string, unknown>;
  }
  read.fail(path, `must be a map, got ${describeType(value)}`);
  return {};
}

function readSections(read: FieldReader, spec: unknown, prefix: string, at: FieldPath): DescriptorSections {
  const root = readSection(read, spec, prefix);
  const workload = readSection(read, root['workload'], at('workload'));
  const source = readSection(read, workload['source'], at('workload.source'));
  const application = readSection(read, workload['application'], at('workload.application'));
  const workspace = readSection(read, application['workspace'], at('workload.application.workspace'));
  const target = readSection(read, root['deploymentTarget'], at('deploymentTarget'));
  const manifests = readSection(read, target['manifests'], at('deploymentTarget.manifests'));
  const version = readSection(read, root['workloadVersion'], at('workloadVersion'));
  return { workload, source, application, workspace, target, manifests, version };
}

/** The workload, its source, application and workspace. */
function readWorkloadFields(read: FieldReader, sections: DescriptorSections, at: FieldPath) {
  const { workload, source, application, workspace } = sections;
  return {
    workloadName: read.requiredString(at('workload.name'), workload['name']),
    sourceRepo: read.optionalString(at('workload.source.repo'), source['repo'], FIELD_LIMITS.endpoint),
    sourceBranch: read.optionalString(at('workload.source.branch'), source['branch']),
    sourcePath: read.optionalString(at('workload.source.path'), source['path'], FIELD_LIMITS.endpoint),
    applicationName: read.requiredString(at('workload.application.name'), application['name']),
    workspaceName: read.requiredString(at('workload.application.workspace.name'), workspace['name']),
  };
}

/** The deployment target, its environment and manifests endpoint (with the commit, when the spec names it). */
function readTargetFields(read: FieldReader, sections: DescriptorSections, at: FieldPath) {
  const { target, manifests } = sections;
  return {
    targetName: read.requiredString(at('deploymentTarget.name'), target['name']),
    environment: read.requiredString(at('deploymentTarget.environment'), target['environment']),
    repo: read.requiredString(at('deploymentTarget.manifests.repo'), manifests['repo'], FIELD_LIMITS.endpoint),
    branch: read.requiredString(at('deploymentTarget.manifests.branch'), manifests['branch']),
    path: read.optionalString(at('deploymentTarget.manifests.path'), manifests['path'], FIELD_LIMITS.endpoint),
    storageType: read.optionalToken(at('deploymentTarget.manifests.storageType'), manifests['storageType']) ?? DEFAULT_STORAGE_TYPE,
    specCommit: read.optionalString(at('deploymentTarget.manifests.commit'), manifests['commit'], FIELD_LIMITS.commit),
  };
}

/** The workload version and the build that made it. */
function readVersionFields(read: FieldReader, sections: DescriptorSections, at: FieldPath) {
  const { version } = sections;
  return {
    versionName: read.requiredString(at('workloadVersion.version'), version['version'], FIELD_LIMITS.version),
    build: read.optionalString(at('workloadVersion.build'), version['build'], FIELD_LIMITS.version) ?? '',
    buildCommit: read.optionalString(at('workloadVersion.commit'), version['commit'], FIELD_LIMITS.commit),
    buildTime: read.optionalTimestamp(at('workloadVersion.buildTime'), version['buildTime']),
  };
}
