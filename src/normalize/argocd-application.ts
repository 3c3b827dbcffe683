// An Argo CD Application → the real state of its reconcilers (CONTRACT 3.5): one per application,
// or one per source of a multi-source one, type `argocd`, on the host its destination names. The
// one mapping both ways in use: k8sobjects records over OTLP (k8sobjects-argocd.ts) and the CRD
// watcher (sources/kube/argocd-application-kind.ts). Pure.
import type { RealStateRecord, ReconcilerRemovedRecord } from '../model/deployment-records.ts';
import { manifestsOf } from '../model/manifests-endpoint.ts';
import { ok, refused, type Result } from '../model/result.ts';
import { type ApplicationFacts, readApplication } from './argocd-facts.ts';
import { destinationHost } from './argocd-host.ts';
import { sourceState } from './argocd-state.ts';

export interface ApplicationInput {
  readonly object: unknown;
  /** `deleted`: the application is gone (a watch DELETED, or no longer listed). */
  readonly event: 'upsert' | 'deleted';
  /** The cluster that sent or watched it: the host of in-cluster destinations. */
  readonly localCluster: string;
  /** When the sender saw it (the record's time, or the watcher's clock). */
  readonly seenAt: Date;
  /** Field names in refusals start with this (`body.object.` over OTLP). */
  readonly prefix?: string;
  /** The namespace when the object does not carry one (the record's k8s.namespace.name). */
  readonly namespace?: string;
}

export interface ReconcilerRef {
  readonly host: string;
  readonly reconciler: string;
}

export interface ApplicationRecords {
  /** States of the sources that have one; removals of every reconciler when the application is gone. */
  readonly records: readonly (RealStateRecord | ReconcilerRemovedRecord)[];
  /** Every reconciler the application maps to, with a state or not: what a deletion takes out. */
  readonly reconcilers: readonly ReconcilerRef[];
  /** Why sources had nothing to record (empty when every source has a state). */
  readonly ignored: readonly string[];
}

export function normalizeArgoApplication(input: ApplicationInput): Result<ApplicationRecords> {
  const prefix = input.prefix ?? '';
  const read = readApplication(input.object, prefix, input.namespace);
  if (!read.ok) return read;
  const app = read.value;
  const host = destinationHost(app.destination, input.localCluster, prefix);
  if (!host.ok) return refused(host.reason);
  const reconcilers = app.sources.map((_, index) => ({ host: host.value, reconciler: reconcilerName(app, index) }));
  if (input.event === 'deleted') {
    const removals = reconcilers.map((ref): ReconcilerRemovedRecord => ({ kind: 'reconciler-removed', ...ref, removedAt: input.seenAt }));
    return ok({ records: removals, reconcilers, ignored: [] });
  }
  // The API server's time of the write that carried this state: a relist, a resync or a pulled copy
  // of an unchanged object is the same observation again, never a newer one. Argo CD writes the
  // status on every refresh (reconciledAt), so its sign of life moves this time.
  const observedAt = app.lastWrite !== undefined && app.lastWrite < input.seenAt ? app.lastWrite : input.seenAt;
  const records: RealStateRecord[] = [];
  const ignored: string[] = [];
  app.sources.forEach((source, index) => {
    const state = sourceState(app, index);
    if ('ignored' in state) {
      ignored.push(`${reconcilers[index]!.reconciler}: ${state.ignored}`);
      return;
    }
    records.push({
      kind: 'real-state',
      host: { name: host.value, type: undefined },
      reconciler: { name: reconcilers[index]!.reconciler, type: 'argocd' },
      manifests: { storageType: source.kind, ...manifestsOf(source.repoURL, source.targetRevision, source.path) },
      commitId: state.commit,
      status: state.status,
      statusMessage: state.message,
      observedAt,
      details: { argocd: { sync: app.sync!.status, health: app.health.status, operation: app.operation?.phase ?? null } },
    });
  });
  return ok({ records, reconcilers, ignored });
}

/** `<namespace>/<name>`, and `#<index of spec.sources>` for each source of a multi-source application. */
function reconcilerName(app: ApplicationFacts, index: number): string {
  return `${app.namespace}/${app.name}${app.multiSource ? `#${index}` : ''}`;
}
