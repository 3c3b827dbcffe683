// Flux objects as the OpenTelemetry Collector's k8sobjects receiver sends them (CONTRACT 3.3) →
// the facts the hub needs, and the state of a Kustomization once its GitRepository is known. This
// makes a stock collector a zero-code edge agent. Pure.
import { canonicalCommitId } from '../model/commit-id.ts';
import type { DeploymentStatus, RealStateRecord } from '../model/deployment-records.ts';
import type { FluxObjectRecord, GitRepositoryFacts, KustomizationFacts } from '../model/flux-objects.ts';
import { manifestsOf } from '../model/manifests-endpoint.ts';
import { FIELD_LIMITS, FieldReader } from './field-reader.ts';
import { ok, refused } from '../model/result.ts';
import type { Normalized } from './normalize-result.ts';

const WATCH_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED']);
const RESOURCES: Record<string, FluxObjectRecord['objectKind']> = { kustomizations: 'Kustomization', gitrepositories: 'GitRepository' };

function map(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** Whether a log record is a k8sobjects record of a Flux object the hub uses. */
export function isFluxObjectRecord(attribute: (key: string) => unknown, body: unknown): boolean {
  // Watch bookmarks, errors and the receiver's end-of-pull markers carry no object state.
  const envelope = map(body);
  if ('object' in envelope && !WATCH_TYPES.has(String(envelope['type']))) return false;
  const resource = attribute('k8s.resource.name');
  if (typeof resource === 'string' && Object.hasOwn(RESOURCES, resource)) return true;
  const object = map(envelope['object'] ?? body);
  return object['kind'] === 'Kustomization' || object['kind'] === 'GitRepository' ? /fluxcd\.io\//.test(String(object['apiVersion'])) : false;
}

export function normalizeFluxObject(attribute: (key: string) => unknown, body: unknown, observedAt: Date): Normalized<FluxObjectRecord> {
  const read = new FieldReader();
  const cluster = read.requiredString('resource attribute k8s.cluster.name', attribute('k8s.cluster.name'));
  // Watch mode: {type, object}; pull mode: the object itself.
  const envelope = map(body);
  const watched = 'object' in envelope;
  const object = map(watched ? envelope['object'] : body);
  const type = watched ? text(envelope['type']) : 'ADDED';
  const resource = String(attribute('k8s.resource.name'));
  const objectKind =
    object['kind'] === 'Kustomization' || object['kind'] === 'GitRepository' ? object['kind'] : Object.hasOwn(RESOURCES, resource) ? RESOURCES[resource] : undefined;
  if (objectKind === undefined) read.fail('body.object.kind', 'must be Kustomization or GitRepository');
  const metadata = map(object['metadata']);
  const name = read.requiredString('body.object.metadata.name', metadata['name']);
  const namespace = read.optionalString('body.object.metadata.namespace', metadata['namespace']) ?? text(attribute('k8s.namespace.name')) ?? 'default';
  if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') read.fail('body.type', `must be ADDED, MODIFIED or DELETED (got ${JSON.stringify(type)})`);
  const spec = map(object['spec']);
  const status = map(object['status']);
  let facts: FluxObjectRecord['facts'];
  if (type !== 'DELETED' && objectKind === 'GitRepository') {
    const ref = map(spec['ref']);
    const refField = (key: string) => read.optionalString(`body.object.spec.ref.${key}`, ref[key]);
    facts = {
      url: read.requiredString('body.object.spec.url', spec['url'], 2048),
      // Flux follows `master` when a GitRepository names no ref.
      ref: refField('branch') ?? refField('tag') ?? refField('semver') ?? refField('commit') ?? refField('name') ?? 'master',
    };
  } else if (type !== 'DELETED' && objectKind === 'Kustomization') {
    const source = map(spec['sourceRef']);
    // (Array.from: a hole, kept by map, is given to find as undefined.)
    const ready = Array.from(Array.isArray(status['conditions']) ? (status['conditions'] as unknown[]) : []).map(map).find((condition) => condition['type'] === 'Ready');
    // Every string kept goes to the store (and a JSON column cannot hold NUL): read them all.
    facts = {
      path: read.optionalString('body.object.spec.path', spec['path'], 2048) ?? '',
      source: {
        kind: read.optionalString('body.object.spec.sourceRef.kind', source['kind']) ?? 'GitRepository',
        namespace: read.optionalString('body.object.spec.sourceRef.namespace', source['namespace']) ?? namespace,
        name: read.requiredString('body.object.spec.sourceRef.name', source['name']),
      },
      suspended: spec['suspend'] === true,
      appliedRevision: read.optionalString('body.object.status.lastAppliedRevision', status['lastAppliedRevision'], FIELD_LIMITS.commit),
      attemptedRevision: read.optionalString('body.object.status.lastAttemptedRevision', status['lastAttemptedRevision'], FIELD_LIMITS.commit),
      ready: {
        status: read.optionalString('body.object.status.conditions[Ready].status', ready?.['status'], FIELD_LIMITS.token),
        reason: read.optionalString('body.object.status.conditions[Ready].reason', ready?.['reason']),
        message: read.message(ready?.['message']),
      },
    };
  }
  if (read.problem !== undefined) return refused(read.problem);
  return ok<FluxObjectRecord>({ kind: 'flux-object', cluster, objectKind: objectKind!, namespace, name, facts, observedAt });
}

/** Flux's Ready reasons that mean "still working", not "failed". */
const PROGRESSING = new Set(['Progressing', 'DependencyNotReady', 'ArtifactFailed', 'ReconciliationInProgress']);

/**
 * The state of a Kustomization pulling from a known GitRepository: endpoint = url + branch + path,
 * commit = the revision the status names, status from the Ready condition. undefined while the
 * Kustomization has not reported any revision.
 */
export function kustomizationState(
  cluster: string,
  kustomization: { readonly namespace: string; readonly name: string; readonly facts: KustomizationFacts; readonly observedAt: Date },
  repository: GitRepositoryFacts,
): RealStateRecord | undefined {
  const { facts } = kustomization;
  let status: DeploymentStatus;
  let message = facts.ready.message;
  if (facts.suspended) {
    status = 'in_progress';
    message = `suspended${message === '' ? '' : `: ${message}`}`;
  } else if (facts.ready.status === 'True') status = 'success';
  else if (facts.ready.status === 'False' && !PROGRESSING.has(facts.ready.reason ?? '')) status = 'failure';
  else status = 'in_progress';
  // A failure or a reconciliation in progress concerns the revision being attempted.
  const revision = status === 'success' ? (facts.appliedRevision ?? facts.attemptedRevision) : (facts.attemptedRevision ?? facts.appliedRevision);
  if (revision === undefined) return undefined;
  return {
    kind: 'real-state',
    host: { name: cluster, type: undefined },
    reconciler: { name: `${kustomization.namespace}/${kustomization.name}`, type: 'flux' },
    manifests: { storageType: 'git', ...manifestsOf(repository.url, repository.ref, facts.path) },
    commitId: canonicalCommitId(revision),
    status,
    statusMessage: message,
    observedAt: kustomization.observedAt,
  };
}
