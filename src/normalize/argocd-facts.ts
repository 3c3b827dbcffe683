// An Argo CD Application as it arrived (unknown JSON) → the facts the mapping needs, every string
// checked, or a refusal naming the field. The mapping itself (argocd-state.ts) then only decides.
import { FIELD_LIMITS, FieldReader } from './field-reader.ts';
import { ok, refused, type Result } from '../model/result.ts';

/** How Argo CD stores what a source points at; the hub's manifests storage type. */
export type SourceKind = 'git' | 'helm' | 'oci';

export interface SourceFacts {
  readonly repoURL: string;
  /** Empty in the spec means HEAD, as Argo CD reads it. */
  readonly targetRevision: string;
  /** The path, or for a Helm repository's chart (which has none) the chart's name. */
  readonly path: string;
  readonly kind: SourceKind;
}

export interface OperationFacts {
  readonly phase: string;
  readonly message: string;
  /** Per source: the revision the operation applied or tried (undefined when it does not say). */
  readonly revisions: readonly (string | undefined)[];
}

export interface ApplicationFacts {
  readonly namespace: string;
  readonly name: string;
  readonly destination: { readonly name: string | undefined; readonly server: string | undefined };
  /** One per reconciler: spec.sources, else spec.source (or the hydrator's sync source). */
  readonly sources: readonly SourceFacts[];
  readonly multiSource: boolean;
  /** undefined before Argo CD first compared the application. */
  readonly sync: { readonly status: string; readonly revisions: readonly (string | undefined)[] } | undefined;
  readonly health: { readonly status: string; readonly message: string };
  readonly operation: OperationFacts | undefined;
  /** ComparisonError, InvalidSpecError and UnknownError messages: what keeps Argo CD from comparing. */
  readonly errors: readonly string[];
  /** Resources whose health is Degraded, as `group/Kind:namespace/name` (only when Argo CD persists it). */
  readonly degraded: readonly string[];
  /** The API server's time of the newest write to the object (managedFields), if it says. */
  readonly lastWrite: Date | undefined;
}

const ERROR_CONDITIONS = new Set(['ComparisonError', 'InvalidSpecError', 'UnknownError']);

function map(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** A list without holes: Array.prototype.map skips a hole and for…of then reads it as undefined. */
function list(value: unknown): unknown[] {
  return Array.isArray(value) ? Array.from(value as unknown[]) : [];
}

/** Reads an Application; field names in refusals start with `prefix` (`body.object.` over OTLP). */
export function readApplication(object: unknown, prefix: string, namespaceFallback?: string): Result<ApplicationFacts> {
  const read = new FieldReader();
  const at = (field: string): string => `${prefix}${field}`;
  const root = map(object);
  const metadata = map(root['metadata']);
  const spec = map(root['spec']);
  const status = map(root['status']);
  const name = read.requiredString(at('metadata.name'), metadata['name']);
  const namespace = read.optionalString(at('metadata.namespace'), metadata['namespace']) ?? namespaceFallback;
  if (namespace === undefined) read.fail(at('metadata.namespace'), 'is missing');
  const destination = map(spec['destination']);
  const facts = {
    namespace: namespace ?? '',
    name,
    destination: {
      name: read.optionalString(at('spec.destination.name'), destination['name']),
      server: read.optionalString(at('spec.destination.server'), destination['server'], FIELD_LIMITS.endpoint),
    },
    ...readSources(read, spec, at),
    sync: readSync(read, map(status['sync']), at),
    health: { status: read.optionalString(at('status.health.status'), map(status['health'])['status'], FIELD_LIMITS.token) ?? 'Unknown', message: read.message(map(status['health'])['message']) },
    operation: readOperation(read, status['operationState'], at),
    errors: list(status['conditions']).map(map).filter((condition) => ERROR_CONDITIONS.has(String(condition['type']))).map((condition) => read.message(condition['message'])),
    degraded: readDegraded(read, status['resources']),
    lastWrite: latestWrite(metadata['managedFields']),
  };
  if (facts.destination.name === undefined && facts.destination.server === undefined) read.fail(at('spec.destination.name'), '(or spec.destination.server) is missing');
  if (read.problem !== undefined) return refused(read.problem);
  return ok(facts);
}

function readSources(read: FieldReader, spec: Record<string, unknown>, at: (field: string) => string): { sources: SourceFacts[]; multiSource: boolean } {
  const sources = list(spec['sources']);
  if (sources.length > 0) return { sources: sources.map((source, index) => readSource(read, map(source), at(`spec.sources[${index}]`))), multiSource: true };
  const hydrator = map(spec['sourceHydrator']);
  if (Object.keys(hydrator).length > 0) {
    // Argo CD syncs a hydrated application from its sync source: the dry source's repository
    // unless the sync source names another, on the sync source's branch and path.
    const sync = map(hydrator['syncSource']);
    const dry = map(hydrator['drySource']);
    const field = (key: string) => at(`spec.sourceHydrator.syncSource.${key}`);
    return {
      sources: [
        {
          repoURL: read.optionalString(field('repoURL'), sync['repoURL'], FIELD_LIMITS.endpoint) ?? read.requiredString(at('spec.sourceHydrator.drySource.repoURL'), dry['repoURL'], FIELD_LIMITS.endpoint),
          targetRevision: read.requiredString(field('targetBranch'), sync['targetBranch']),
          path: read.optionalString(field('path'), sync['path'], FIELD_LIMITS.endpoint) ?? '',
          kind: 'git',
        },
      ],
      multiSource: false,
    };
  }
  return { sources: [readSource(read, map(spec['source']), at('spec.source'))], multiSource: false };
}

function readSource(read: FieldReader, source: Record<string, unknown>, at: string): SourceFacts {
  const repoURL = read.requiredString(`${at}.repoURL`, source['repoURL'], FIELD_LIMITS.endpoint);
  const chart = read.optionalString(`${at}.chart`, source['chart']);
  return {
    repoURL,
    targetRevision: read.optionalString(`${at}.targetRevision`, source['targetRevision']) ?? 'HEAD',
    path: read.optionalString(`${at}.path`, source['path'], FIELD_LIMITS.endpoint) ?? chart ?? '',
    kind: chart !== undefined ? 'helm' : /^oci:\/\//i.test(repoURL) ? 'oci' : 'git',
  };
}

function readSync(read: FieldReader, sync: Record<string, unknown>, at: (field: string) => string): ApplicationFacts['sync'] {
  const status = read.optionalString(at('status.sync.status'), sync['status'], FIELD_LIMITS.token);
  if (status === undefined) return undefined;
  const single = read.optionalString(at('status.sync.revision'), sync['revision'], FIELD_LIMITS.commit);
  const many = list(sync['revisions']).map((revision, index) => read.optionalString(at(`status.sync.revisions[${index}]`), revision, FIELD_LIMITS.commit));
  return { status, revisions: many.length > 0 ? many : [single] };
}

function readOperation(read: FieldReader, value: unknown, at: (field: string) => string): OperationFacts | undefined {
  const state = map(value);
  const phase = read.optionalString(at('status.operationState.phase'), state['phase'], FIELD_LIMITS.token);
  if (phase === undefined) return undefined;
  const result = map(state['syncResult']);
  const asked = map(map(state['operation'])['sync']);
  const revision = (from: Record<string, unknown>, field: string) => read.optionalString(at(`status.operationState.${field}.revision`), from['revision'], FIELD_LIMITS.commit);
  const revisions = (from: Record<string, unknown>, field: string) =>
    list(from['revisions']).map((entry, index) => read.optionalString(at(`status.operationState.${field}.revisions[${index}]`), entry, FIELD_LIMITS.commit));
  // The result's revisions are resolved; what was asked for may be a branch, or nothing.
  const resolved = revisions(result, 'syncResult');
  const requested = revisions(asked, 'operation.sync');
  const single = revision(result, 'syncResult') ?? revision(asked, 'operation.sync');
  const count = Math.max(resolved.length, requested.length, 1);
  return {
    phase,
    message: read.message(state['message']),
    revisions: Array.from({ length: count }, (_, index) => resolved[index] ?? requested[index] ?? (index === 0 ? single : undefined)),
  };
}

/** As Argo CD 3.6 names them in its health message: `group/Kind:namespace/name` (core resources without the group). */
function readDegraded(read: FieldReader, value: unknown): string[] {
  const text = (field: unknown): string => (typeof field === 'string' ? field : '');
  return list(value)
    .map(map)
    .filter((resource) => map(resource['health'])['status'] === 'Degraded')
    .map((resource) => read.message(`${text(resource['group'])}/${text(resource['kind'])}:${text(resource['namespace'])}/${text(resource['name'])}`).replace(/^\//, ''));
}

/** The newest managedFields time: the API server stamps it on every write, status writes included (Applications have no status subresource). */
function latestWrite(value: unknown): Date | undefined {
  let newest: number | undefined;
  for (const entry of list(value).map(map)) {
    const time = typeof entry['time'] === 'string' ? Date.parse(entry['time']) : NaN;
    if (!Number.isNaN(time) && (newest === undefined || time > newest)) newest = time;
  }
  return newest === undefined ? undefined : new Date(newest);
}
