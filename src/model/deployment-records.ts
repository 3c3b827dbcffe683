// The normalized records every source produces and the store consumes. Sources differ in wire
// format (OTLP log records, Kubernetes resources, Azure Resource Graph rows); once normalized,
// desired and real state look the same whichever way they arrived.
import type { FluxObjectRecord } from './flux-objects.ts';

export const DEPLOYMENT_STATUSES = ['success', 'failure', 'in_progress'] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/** A status as reports show it: stale when the reconciler has been silent past the stale-after setting. */
export const EFFECTIVE_STATUSES = [...DEPLOYMENT_STATUSES, 'stale'] as const;
export type EffectiveStatus = (typeof EFFECTIVE_STATUSES)[number];

export const RECONCILER_TYPES = ['flux', 'argocd', 'arc', 'wo', 'custom'] as const;
export type ReconcilerType = (typeof RECONCILER_TYPES)[number];

export const DEFAULT_HOST_TYPE = 'k8s-cluster';
export const DEFAULT_STORAGE_TYPE = 'git';

/** Where a reconciler pulls manifests from, in normal form (see manifests-endpoint.ts). */
export interface ManifestsRef {
  readonly storageType: string;
  readonly endpoint: string;
  /**
   * `repo/branch` in normal form, when the source named repo and branch apart (a joined endpoint
   * cannot be split: repos and branches both contain `/`). Endpoints on one branch share commits.
   */
  readonly branch?: string;
  /** The repository in normal form, when the source named it apart: where commit statuses are posted. */
  readonly repo?: string;
}

/**
 * What a reconciler kind says beyond status and message, for people to read: kept with the current
 * state only (a change of it alone is no transition of history).
 */
export interface ReconcilerDetails {
  /** An Argo CD Application's sync and health status, and its last operation's phase (null: none yet). */
  readonly argocd?: { readonly sync: string; readonly health: string; readonly operation: string | null };
}

/** Real state: what one reconciler on one host applied, observed at a point in time. */
export interface RealStateRecord {
  readonly kind: 'real-state';
  /** `type` is undefined when the report did not state it: an existing host keeps its type. */
  readonly host: { readonly name: string; readonly type: string | undefined };
  readonly reconciler: { readonly name: string; readonly type: ReconcilerType };
  readonly manifests: ManifestsRef;
  /** Canonical GitOps commit id (see commit-id.ts). */
  readonly commitId: string;
  readonly status: DeploymentStatus;
  readonly statusMessage: string;
  /** When the state was observed on the host (never later than when the hub received it). */
  readonly observedAt: Date;
  /** The polled feed that reported it, for feeds that remove what they no longer see. */
  readonly reportedBy?: string;
  readonly details?: ReconcilerDetails;
}

/** Desired state: a CD pipeline assigned a workload version to a deployment target under a GitOps commit. */
export interface DesiredStateRecord {
  readonly kind: 'desired-state';
  readonly workspace: string;
  readonly application: string;
  readonly workload: {
    readonly name: string;
    readonly source: { readonly repo: string; readonly branch: string; readonly path: string } | undefined;
  };
  readonly environment: string;
  readonly deploymentTarget: { readonly name: string; readonly manifests: ManifestsRef };
  readonly workloadVersion: {
    readonly version: string;
    readonly build: string;
    readonly commit: string | undefined;
    readonly buildTime: Date | undefined;
  };
  /** Canonical GitOps commit id of the manifests that carry this version. */
  readonly commitId: string;
  readonly assignedAt: Date;
}

/** A reconciler deleted at its source: it leaves the current state; its history stays. */
export interface ReconcilerRemovedRecord {
  readonly kind: 'reconciler-removed';
  readonly host: string;
  readonly reconciler: string;
  readonly removedAt: Date;
}

/** Flux objects become real state in the store, once a Kustomization's GitRepository is known. */
export type NormalizedRecord = RealStateRecord | DesiredStateRecord | ReconcilerRemovedRecord | FluxObjectRecord;
