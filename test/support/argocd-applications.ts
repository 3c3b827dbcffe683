// Argo CD Applications for tests, shaped as test/fixtures/argocd/ (Argo CD's own types): a spec and
// a status that move as Argo CD moves them — a refresh compares a new commit (OutOfSync), an
// automated sync runs (Running, Progressing), finishes (Succeeded, or Failed after its retries),
// health settles — each status write stamped by the API server in managedFields. Also the
// k8sobjects receiver's watch-mode record of one (docs/research/argocd-application-status.md §10).
import type { AnyValueMap } from '@opentelemetry/api-logs';
import type { LogSpec } from './otlp-client.ts';

export const APPLICATIONS_RESOURCE = { group: 'argoproj.io', version: 'v1alpha1', plural: 'applications', kind: 'Application' } as const;

export interface AppSource {
  readonly repoURL: string;
  readonly targetRevision: string;
  readonly path?: string;
  readonly ref?: string;
}

export interface AppShape {
  readonly name: string;
  readonly namespace?: string;
  readonly destination: { readonly name?: string; readonly server?: string };
  /** One source, or several (multi-source). */
  readonly sources: readonly AppSource[];
}

export type Health = 'Healthy' | 'Progressing' | 'Degraded' | 'Suspended' | 'Missing' | 'Unknown';

export interface AppMoment {
  /** status.sync: the revision(s) compared last, one per source. */
  readonly sync: { readonly status: 'Synced' | 'OutOfSync' | 'Unknown'; readonly revisions: readonly string[] };
  readonly health: Health;
  readonly healthMessage?: string;
  /** The last operation, with the revision(s) it applied or tried. */
  readonly operation?: { readonly phase: 'Running' | 'Succeeded' | 'Failed' | 'Error'; readonly message: string; readonly revisions: readonly string[] };
  readonly conditions?: readonly { readonly type: string; readonly message: string }[];
  /** The last refresh (sign of life); also the API server's time of this status write. */
  readonly at: Date;
}

const seconds = (time: Date): string => `${time.toISOString().slice(0, 19)}Z`;

function multi(shape: AppShape): boolean {
  return shape.sources.length > 1;
}

function revisionFields(shape: AppShape, revisions: readonly string[]): Record<string, unknown> {
  return multi(shape) ? { revisions: [...revisions] } : { revision: revisions[0] };
}

function specOf(shape: AppShape): Record<string, unknown> {
  const sources = shape.sources.map((source) => ({ ...source }));
  return {
    project: 'default',
    destination: { ...shape.destination, namespace: shape.name },
    ...(multi(shape) ? { sources } : { source: sources[0] }),
    syncPolicy: { automated: { prune: true, selfHeal: true } },
  };
}

function statusOf(shape: AppShape, moment: AppMoment): Record<string, unknown> {
  const { operation } = moment;
  return {
    sync: { status: moment.sync.status, ...revisionFields(shape, moment.sync.revisions), comparedTo: { destination: shape.destination } },
    health: { status: moment.health, ...(moment.healthMessage === undefined ? {} : { message: moment.healthMessage }), lastTransitionTime: seconds(moment.at) },
    reconciledAt: seconds(moment.at),
    resourceHealthSource: 'appTree',
    ...(operation === undefined
      ? {}
      : {
          operationState: {
            phase: operation.phase,
            message: operation.message,
            operation: { initiatedBy: { automated: true }, retry: { limit: 5 }, sync: revisionFields(shape, operation.revisions) },
            syncResult: multi(shape) ? { revision: '', revisions: [...operation.revisions] } : { revision: operation.revisions[0] },
            startedAt: seconds(moment.at),
            ...(operation.phase === 'Running' ? {} : { finishedAt: seconds(moment.at) }),
          },
        }),
    ...(moment.conditions === undefined ? {} : { conditions: moment.conditions.map((condition) => ({ ...condition, lastTransitionTime: seconds(moment.at) })) }),
  };
}

/** The object as the API server returns it after Argo CD's status write at `moment.at`. */
export function applicationObject(shape: AppShape, moment: AppMoment): Record<string, any> {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name: shape.name,
      namespace: shape.namespace ?? 'argocd',
      finalizers: ['resources-finalizer.argocd.argoproj.io'],
      resourceVersion: String(moment.at.getTime()),
      managedFields: [
        { manager: 'kubectl-client-side-apply', operation: 'Update', apiVersion: 'argoproj.io/v1alpha1', time: '2026-01-05T10:00:00Z', fieldsType: 'FieldsV1' },
        { manager: 'argocd-application-controller', operation: 'Update', apiVersion: 'argoproj.io/v1alpha1', time: seconds(moment.at), fieldsType: 'FieldsV1' },
      ],
    },
    spec: specOf(shape),
    status: statusOf(shape, moment),
  };
}

/** The spec alone, as a user applies it. */
export function applicationSpec(shape: AppShape): Record<string, any> {
  return { metadata: { name: shape.name, namespace: shape.namespace ?? 'argocd' }, spec: specOf(shape) };
}

export { statusOf as applicationStatus };

/** Moments of an automated sync of `revisions` (one per source), as Argo CD writes them. */
export const moments = {
  synced: (revisions: readonly string[], at: Date, health: Health = 'Healthy'): AppMoment => ({
    sync: { status: 'Synced', revisions },
    health,
    operation: { phase: 'Succeeded', message: 'successfully synced (all tasks run)', revisions },
    at,
  }),
  /** A refresh saw a new commit; the last operation was about the one before. */
  outOfSync: (revisions: readonly string[], before: readonly string[], at: Date): AppMoment => ({
    sync: { status: 'OutOfSync', revisions },
    health: 'Healthy',
    operation: { phase: 'Succeeded', message: 'successfully synced (all tasks run)', revisions: before },
    at,
  }),
  syncing: (revisions: readonly string[], at: Date): AppMoment => ({
    sync: { status: 'Synced', revisions },
    health: 'Progressing',
    operation: { phase: 'Running', message: 'waiting for healthy state of apps/Deployment/api', revisions },
    at,
  }),
  failed: (revisions: readonly string[], at: Date, message: string): AppMoment => ({
    sync: { status: 'OutOfSync', revisions },
    health: 'Healthy',
    operation: { phase: 'Failed', message, revisions },
    at,
  }),
};

/** The k8sobjects receiver's watch-mode record of an object, with the cluster a resource processor adds. */
export function applicationRecord(cluster: string, object: Record<string, any>, type: 'ADDED' | 'MODIFIED' | 'DELETED', at: Date): LogSpec {
  return {
    resource: { 'k8s.namespace.name': object['metadata'].namespace, 'k8s.cluster.name': cluster },
    attributes: { 'k8s.resource.name': 'applications', 'event.domain': 'k8s', 'event.name': object['metadata'].name },
    body: { type, object: object as AnyValueMap },
    time: at,
  };
}
