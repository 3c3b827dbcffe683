// Flux objects as the OpenTelemetry Collector's k8sobjects receiver emits them in watch mode:
// body {type, object}, attributes k8s.resource.name / event.domain / event.name (the object's
// name), resource attribute k8s.namespace.name, plus the k8s.cluster.name a processor adds.
import type { AnyValueMap } from '@opentelemetry/api-logs';
import type { LogSpec } from './otlp-client.ts';

type WatchType = 'ADDED' | 'MODIFIED' | 'DELETED';

function watchRecord(cluster: string | undefined, plural: string, type: WatchType | undefined, object: AnyValueMap, at: Date): LogSpec {
  const metadata = object['metadata'] as { name: string; namespace: string };
  return {
    resource: { 'k8s.namespace.name': metadata.namespace, ...(cluster === undefined ? {} : { 'k8s.cluster.name': cluster }) },
    attributes: { 'k8s.resource.name': plural, 'event.domain': 'k8s', 'event.name': metadata.name },
    // Pull mode sends the bare object.
    body: type === undefined ? object : { type, object },
    time: at,
  };
}

export function gitRepository(options: {
  cluster: string | undefined;
  name?: string;
  namespace?: string;
  url: string;
  branch?: string;
  type?: WatchType;
  at: Date;
}): LogSpec {
  return watchRecord(
    options.cluster,
    'gitrepositories',
    options.type ?? 'MODIFIED',
    {
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'GitRepository',
      metadata: { name: options.name ?? 'gitops', namespace: options.namespace ?? 'flux-system', resourceVersion: '1' },
      spec: { url: options.url, interval: '1m', ...(options.branch === undefined ? {} : { ref: { branch: options.branch } }) },
      status: { artifact: { revision: `${options.branch ?? 'master'}@sha1:${'0'.repeat(40)}` } },
    },
    options.at,
  );
}

export function kustomization(options: {
  cluster: string | undefined;
  name: string;
  namespace?: string;
  path: string;
  source?: string;
  applied?: string;
  attempted?: string;
  ready?: { status: 'True' | 'False' | 'Unknown'; reason: string; message: string };
  suspend?: boolean;
  type?: WatchType | 'pull';
  at: Date;
}): LogSpec {
  const conditions = options.ready === undefined ? [] : [{ type: 'Ready', lastTransitionTime: options.at.toISOString(), ...options.ready }];
  return watchRecord(
    options.cluster,
    'kustomizations',
    options.type === 'pull' ? undefined : (options.type ?? 'MODIFIED'),
    {
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: options.name, namespace: options.namespace ?? 'flux-system', resourceVersion: '2' },
      spec: {
        interval: '5m',
        path: options.path,
        prune: true,
        sourceRef: { kind: 'GitRepository', name: options.source ?? 'gitops' },
        ...(options.suspend === true ? { suspend: true } : {}),
      },
      status: {
        ...(options.applied === undefined ? {} : { lastAppliedRevision: options.applied }),
        ...(options.attempted === undefined ? {} : { lastAttemptedRevision: options.attempted }),
        conditions,
      },
    },
    options.at,
  );
}
