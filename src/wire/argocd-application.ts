// Argo CD `Application`s (argoproj.io/v1alpha1) as the API server and the collector's k8sobjects
// receiver carry them: the fields the hub reads, named as Argo CD's
// pkg/apis/application/v1alpha1/types.go names them (docs/research/argocd-application-status.md).
// They arrive as plain JSON, unchecked: the normalizer reads every field as unknown and says
// which one is wrong; these types document the shape and type the tests' fixtures.
import type { KubeObject } from './kube-object.ts';

export const ARGOCD_GROUP = 'argoproj.io';
export const ARGOCD_VERSION = 'v1alpha1';
export const APPLICATION_KIND = 'Application';
/** The resource's plural: the k8sobjects receiver's `k8s.resource.name`. */
export const APPLICATIONS = 'applications';

export interface ApplicationSource {
  readonly repoURL?: string;
  /** A branch, tag or commit for Git; a chart version (or range) for a Helm repository. Empty means HEAD. */
  readonly targetRevision?: string;
  readonly path?: string;
  /** Set only for charts pulled from a Helm repository. */
  readonly chart?: string;
  /** A multi-source application's source that only lends value files to another (`$values/…`). */
  readonly ref?: string;
}

export interface ApplicationSpec {
  readonly source?: ApplicationSource;
  /** When present, `source` is ignored: one reconciler per entry. */
  readonly sources?: readonly ApplicationSource[];
  readonly sourceHydrator?: {
    readonly drySource?: ApplicationSource;
    readonly syncSource?: { readonly repoURL?: string; readonly targetBranch?: string; readonly path?: string };
  };
  readonly destination?: { readonly name?: string; readonly server?: string; readonly namespace?: string };
}

export interface OperationState {
  /** Running, Terminating, Failed, Error or Succeeded. */
  readonly phase?: string;
  readonly message?: string;
  /** What was asked for. */
  readonly operation?: { readonly sync?: { readonly revision?: string; readonly revisions?: readonly string[] } };
  /** The revision(s) the operation applied or tried to apply, resolved. */
  readonly syncResult?: { readonly revision?: string; readonly revisions?: readonly string[] };
  readonly startedAt?: string;
  readonly finishedAt?: string;
}

export interface ApplicationStatus {
  readonly sync?: { readonly status?: string; readonly revision?: string; readonly revisions?: readonly string[] };
  readonly health?: { readonly status?: string; readonly message?: string };
  readonly operationState?: OperationState;
  readonly conditions?: readonly { readonly type?: string; readonly message?: string }[];
  /** Moves on every refresh that compares with Git (every ~3 minutes): a sign of life. */
  readonly reconciledAt?: string;
  readonly resources?: readonly {
    readonly group?: string;
    readonly kind?: string;
    readonly namespace?: string;
    readonly name?: string;
    readonly health?: { readonly status?: string };
  }[];
}

export type ApplicationObject = KubeObject & { readonly spec?: ApplicationSpec; readonly status?: ApplicationStatus };
