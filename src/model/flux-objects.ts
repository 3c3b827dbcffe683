// Flux objects (Kustomization, GitRepository) as a stock OpenTelemetry Collector's k8sobjects
// receiver reports them, reduced to the facts the hub needs. A Kustomization alone does not say
// which manifests endpoint it applies (the repository url and branch live in its GitRepository),
// so these records are kept per cluster and turned into real state once both halves are known.

export interface GitRepositoryFacts {
  readonly url: string;
  /** The branch (or tag, semver range, commit) the repository follows. */
  readonly ref: string;
}

export interface KustomizationFacts {
  readonly path: string;
  readonly source: { readonly kind: string; readonly namespace: string; readonly name: string };
  readonly suspended: boolean;
  readonly appliedRevision: string | undefined;
  readonly attemptedRevision: string | undefined;
  readonly ready: { readonly status: string | undefined; readonly reason: string | undefined; readonly message: string };
}

export type FluxObjectKind = 'Kustomization' | 'GitRepository';

export interface FluxObjectRecord {
  readonly kind: 'flux-object';
  readonly cluster: string;
  readonly objectKind: FluxObjectKind;
  readonly namespace: string;
  readonly name: string;
  /** undefined when the object was deleted. */
  readonly facts: KustomizationFacts | GitRepositoryFacts | undefined;
  readonly observedAt: Date;
}
