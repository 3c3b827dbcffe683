// Kubernetes resources → normalized records: the `DeploymentDescriptor` resources of the hub
// (CONTRACT 4), and the specs of `AzureResourceGraph` resources (Reconciler resources:
// reconciler-resource.ts). Pure.
import type { KubeObject } from '../wire/kube-object.ts';
import { parseDuration } from '../config/units.ts';
import { normalizeDescriptorSpec } from './deployment-descriptor.ts';
import { describeType, FieldReader } from './field-reader.ts';
import type { DesiredStateRecord } from '../model/deployment-records.ts';
import { ok, refused, type Result } from '../model/result.ts';
import type { Normalized } from './normalize-result.ts';

export const KUSTOMIZATION_NAME_LABEL = 'kustomize.toolkit.fluxcd.io/name';
export const KUSTOMIZATION_NAMESPACE_LABEL = 'kustomize.toolkit.fluxcd.io/namespace';

/**
 * When the resource's content last changed: the newest write by any field manager except writes
 * to the status subresource (the hub's own), else its creation. The API server stamps these, so
 * the same object always yields the same time, however often it is relisted.
 */
export function lastWriteTime(object: KubeObject): Date | undefined {
  let newest: number | undefined;
  for (const entry of object.metadata.managedFields ?? []) {
    if (entry.subresource === 'status' || entry.time === undefined) continue;
    const time = new Date(entry.time).getTime();
    if (!Number.isNaN(time) && (newest === undefined || time > newest)) newest = time;
  }
  if (newest !== undefined) return new Date(newest);
  const created = object.metadata.creationTimestamp === undefined ? NaN : new Date(object.metadata.creationTimestamp).getTime();
  return Number.isNaN(created) ? undefined : new Date(created);
}

function map(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** Where a descriptor's GitOps commit comes from. */
export type DescriptorCommitSource =
  | { readonly kind: 'spec'; readonly commit: string }
  | { readonly kind: 'kustomization'; readonly namespace: string; readonly name: string }
  | { readonly kind: 'none' };

export function descriptorCommitSource(object: KubeObject): DescriptorCommitSource {
  const manifests = map(map(map(object.spec)['deploymentTarget'])['manifests']);
  const commit = manifests['commit'];
  if (typeof commit === 'string' && commit.trim() !== '') return { kind: 'spec', commit };
  const labels = object.metadata.labels ?? {};
  const name = labels[KUSTOMIZATION_NAME_LABEL];
  if (name === undefined || name === '') return { kind: 'none' };
  return { kind: 'kustomization', namespace: labels[KUSTOMIZATION_NAMESPACE_LABEL] ?? object.metadata.namespace ?? '', name };
}

/** When a Flux Kustomization applied its `status.lastAppliedRevision`. */
export interface KustomizationApplied {
  readonly revision: string;
  readonly at: Date;
}

interface Condition {
  readonly type?: unknown;
  readonly status?: unknown;
  readonly lastTransitionTime?: unknown;
}

/**
 * When the Kustomization `kustomization` applied its last applied revision, as evidence for ordering
 * the assignments of `descriptor` (docs/research/flux-kustomization-status.md):
 *
 * - Its Ready condition turns True after each successful reconciliation (`Applied revision: …`),
 *   at the same status write as `lastAppliedRevision`; the transition time is therefore the moment
 *   the revision was applied, or later (Flux resets it every interval). Ready not True (reconciling,
 *   failing): the hub's first sight of the revision, `now`.
 * - A descriptor written after that transition was changed by an apply whose result the
 *   Kustomization has not reported yet: its revision would name the previous commit. It is pending
 *   until the Kustomization reports (at the latest, its next interval).
 */
export function kustomizationAppliedAt(kustomization: KubeObject, descriptor: KubeObject, now: Date): Result<KustomizationApplied> {
  const status = map(kustomization.status);
  const revision = typeof status['lastAppliedRevision'] === 'string' && status['lastAppliedRevision'] !== '' ? status['lastAppliedRevision'] : undefined;
  const name = `${kustomization.metadata.namespace ?? ''}/${kustomization.metadata.name ?? ''}`;
  if (revision === undefined) return refused(`waiting for status.lastAppliedRevision of Kustomization ${name}`);
  const conditions = Array.isArray(status['conditions']) ? (status['conditions'] as Condition[]) : [];
  const ready = conditions.find((condition) => condition?.type === 'Ready');
  const since = typeof ready?.lastTransitionTime === 'string' ? new Date(ready.lastTransitionTime) : undefined;
  if (since === undefined || Number.isNaN(since.getTime())) return ok({ revision, at: now });
  const written = lastWriteTime(descriptor);
  if (written !== undefined && written > since) {
    return refused(`waiting for Kustomization ${name} to report the revision that changed this descriptor`);
  }
  return ok({ revision, at: ready?.status === 'True' && since < now ? since : now });
}

/**
 * A `DeploymentDescriptor` → desired state. `kustomization` is what the Flux Kustomization its
 * labels name says it applied, if it is known.
 */
export function normalizeDescriptorResource(
  object: KubeObject,
  kustomization: KustomizationApplied | undefined,
  receivedAt: Date,
): Normalized<DesiredStateRecord> {
  const source = descriptorCommitSource(object);
  const commitField =
    source.kind === 'kustomization'
      ? `status.lastAppliedRevision of Kustomization ${source.namespace}/${source.name}`
      : `the labels ${KUSTOMIZATION_NAME_LABEL} and ${KUSTOMIZATION_NAMESPACE_LABEL} (naming a Flux Kustomization)`;
  // Assignments are ordered by time evidence: when the Kustomization applied the revision (a merge
  // that did not touch the descriptor still moves it to the new commit), else the object's write.
  return normalizeDescriptorSpec(object.spec, {
    prefix: 'spec',
    commitId: source.kind === 'kustomization' ? kustomization?.revision : undefined,
    commitField,
    assignedAt: (source.kind === 'kustomization' ? kustomization?.at : undefined) ?? lastWriteTime(object) ?? receivedAt,
  });
}

export interface ResourceGraphSourceSpec {
  /** `namespace/name` of the resource, or the name of an --arg-config entry. */
  readonly name: string;
  readonly subscriptions: readonly string[];
  readonly tenant: string;
  /**
   * Where application Kustomizations named `env.workload.target` (no workspace, no application)
   * belong when several deployment targets would match: what the original hub's WORKSPACE and
   * APPLICATION environment variables said.
   */
  readonly defaultWorkspace: string | undefined;
  readonly defaultApplication: string | undefined;
  readonly credential:
    | { readonly kind: 'managed-identity'; readonly clientId: string | undefined }
    | { readonly kind: 'client-secret'; readonly secretName: string }
    | { readonly kind: 'client-secret-file'; readonly clientId: string; readonly secretFile: string };
  readonly intervalMs: number;
}

export const DEFAULT_POLL_INTERVAL_MS = 5 * 60_000;
const MIN_POLL_INTERVAL_MS = 5_000;

/** An `AzureResourceGraph` spec (or an --arg-config entry with the same fields) → a poll source. */
export function parseResourceGraphSpec(
  name: string,
  spec: unknown,
  prefix = 'spec',
): Result<ResourceGraphSourceSpec> {
  const read = new FieldReader();
  const fields = map(spec);
  const at = (field: string) => `${prefix}.${field}`;
  const subscription = read.optionalString(at('subscription'), fields['subscription']);
  const listed = Array.isArray(fields['subscriptions']) ? fields['subscriptions'] : [];
  const subscriptions = [
    ...(subscription === undefined ? [] : [subscription]),
    ...listed.map((value, index) => read.requiredString(at(`subscriptions[${index}]`), value)),
  ];
  if (subscriptions.length === 0) read.fail(at('subscription'), 'is missing');
  const tenant = read.requiredString(at('tenant'), fields['tenant']);
  const managedIdentity = read.optionalString(at('managedIdentity'), fields['managedIdentity']);
  // The original hub's manifests name the Secret directly; ours as {name}. Both are accepted.
  const secretRef = fields['secretRef'];
  let secretName: string | undefined;
  if (typeof secretRef === 'string' || secretRef === undefined || secretRef === null) {
    secretName = read.optionalString(at('secretRef'), secretRef ?? undefined);
  } else if (typeof secretRef === 'object' && !Array.isArray(secretRef)) {
    secretName = read.requiredString(at('secretRef.name'), map(secretRef)['name']);
  } else {
    read.fail(at('secretRef'), `must be a Secret name or {name: …}, got ${describeType(secretRef)}`);
  }
  const defaultWorkspace = read.optionalString(at('defaultWorkspace'), fields['defaultWorkspace']);
  const defaultApplication = read.optionalString(at('defaultApplication'), fields['defaultApplication']);
  const clientId = read.optionalString(at('clientId'), fields['clientId']);
  const secretFile = read.optionalString(at('clientSecretFile'), fields['clientSecretFile'], 4096);
  const intervalText = read.optionalString(at('interval'), fields['interval'], 32);
  const intervalMs = intervalText === undefined ? DEFAULT_POLL_INTERVAL_MS : parseDuration(intervalText);
  if (intervalMs === undefined) read.fail(at('interval'), `must be a duration such as 30s or 5m (got ${JSON.stringify(intervalText)})`);
  else if (intervalMs < MIN_POLL_INTERVAL_MS) read.fail(at('interval'), `must be at least ${MIN_POLL_INTERVAL_MS / 1_000}s`);
  const credentials = [managedIdentity, secretName, secretFile].filter((value) => value !== undefined).length;
  if (credentials > 1) read.fail(at('managedIdentity'), 'cannot be combined with secretRef or clientSecretFile: choose one credential');
  if (secretFile !== undefined && clientId === undefined) read.fail(at('clientId'), 'is required with clientSecretFile');
  if (read.problem !== undefined) return refused(read.problem);
  return ok({
      name,
      subscriptions,
      tenant,
      defaultWorkspace,
      defaultApplication,
      credential:
        secretName !== undefined
          ? { kind: 'client-secret', secretName }
          : secretFile !== undefined
            ? { kind: 'client-secret-file', clientId: clientId!, secretFile }
            : { kind: 'managed-identity', clientId: managedIdentity },
    intervalMs: intervalMs!,
  });
}
