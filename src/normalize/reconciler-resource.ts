// `Reconciler` resources → real state (CONTRACT 4), reading what the original Go hub's users wrote
// as that hub did (docs/moving-from-the-original-hub.md): a reconcilerType or status it does not
// know is recorded (as `custom`, as `in_progress`) with a warning rather than refused; a Reconciler
// without a deployment yet is registered and waits; the ones the original's AzureResourceGraph
// controller created are recognised and left alone, since this hub polls Resource Graph itself. Pure.
import { RECONCILER_TYPES, DEPLOYMENT_STATUSES, type RealStateRecord, type ReconcilerType } from '../model/deployment-records.ts';
import type { KubeObject } from '../wire/kube-object.ts';
import { describeType, FieldReader } from './field-reader.ts';
import { lastWriteTime } from './kube-resources.ts';
import { type Field, normalizeRealState, STATUS_ALIASES } from './real-state.ts';

/** The label the original hub's AzureResourceGraph controller puts on each Reconciler it creates (its value: the resource's name). */
export const ORIGINAL_ARG_LABEL = 'azure-resource-graph';

/** Spellings of the types that people (and older agents) write. */
const TYPE_ALIASES: Readonly<Record<string, ReconcilerType>> = { argo: 'argocd', argo_cd: 'argocd' };

export type ReconcilerReading =
  /** Recorded; `warnings` say what was read otherwise than written. */
  | { readonly kind: 'recorded'; readonly record: RealStateRecord; readonly warnings: readonly string[] }
  /** Valid, but no deployment to record yet (no spec.deployment, or an empty commit). */
  | { readonly kind: 'waiting'; readonly why: string }
  /** Created by the original hub's AzureResourceGraph controller (named here). */
  | { readonly kind: 'resource-graph-copy'; readonly graph: string }
  | { readonly kind: 'invalid'; readonly reason: string };

function map(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * Whether a `Reconciler`'s writer keeps it alive with `spec.lastHeartbeatTime`. Such a resource is
 * as fresh as its last write, and turns stale when the writes stop. One without it is a
 * declaration, as the original hub's were: it holds while it exists, and the hub confirms it while
 * it watches (an API server ignores a re-apply of the same object, so nothing else would).
 */
export function declaresHeartbeat(object: KubeObject): boolean {
  return map(object.spec)['lastHeartbeatTime'] !== undefined;
}

/** The name of the AzureResourceGraph whose original controller created this Reconciler, if one did. */
function createdByResourceGraph(object: KubeObject): string | undefined {
  const label = object.metadata.labels?.[ORIGINAL_ARG_LABEL];
  if (label !== undefined) return label;
  const owner = (object.metadata.ownerReferences ?? []).find((reference) => reference.kind === 'AzureResourceGraph' && reference.apiVersion.startsWith('hub.kalypso.io/'));
  return owner?.name;
}

export function readReconcilerResource(object: KubeObject, receivedAt: Date): ReconcilerReading {
  const graph = createdByResourceGraph(object);
  if (graph !== undefined) return { kind: 'resource-graph-copy', graph };
  if (object.spec !== undefined && object.spec !== null && (typeof object.spec !== 'object' || Array.isArray(object.spec))) {
    return { kind: 'invalid', reason: `spec must be a map, got ${describeType(object.spec)}` };
  }
  const spec = map(object.spec);
  const heartbeat = spec['lastHeartbeatTime'];
  if (heartbeat !== undefined && (typeof heartbeat !== 'string' || Number.isNaN(Date.parse(heartbeat)))) {
    return { kind: 'invalid', reason: `spec.lastHeartbeatTime must be an RFC 3339 time such as 2026-01-02T15:04:05Z (got ${JSON.stringify(heartbeat)})` };
  }
  const deployment = map(spec['deployment']);
  const commit = deployment['gitOpsCommitId'];
  const waiting =
    spec['deployment'] === undefined || spec['deployment'] === null
      ? 'spec.deployment is not set: nothing to record until it names a commit'
      : typeof commit === 'string' && commit.trim() === ''
        ? 'spec.deployment.gitOpsCommitId is empty: nothing to record until it names a commit'
        : undefined;
  const warnings: string[] = [];
  const typeField = spec['reconcilerType'] === undefined ? field('type', spec['type']) : field('reconcilerType', spec['reconcilerType']);
  // No type is the documented default (custom); no status is a report that never counts as success.
  const type = leniently(typeField, { allowed: RECONCILER_TYPES, aliases: TYPE_ALIASES, fallback: 'custom', warnUnset: false }, warnings);
  const status = leniently(field('deployment.status', deployment['status']), { allowed: DEPLOYMENT_STATUSES, aliases: STATUS_ALIASES, fallback: 'in_progress', warnUnset: true }, warnings);
  const outcome = normalizeRealState({
    host: field('hostName', spec['hostName']),
    hostType: field('hostType', spec['hostType']),
    // The seeds' older shape had no reconcilerName: the resource's name stands in for it.
    reconcilerName: field('reconcilerName', spec['reconcilerName'] ?? object.metadata.name),
    reconcilerType: type,
    endpoint: field('manifestsEndpoint', spec['manifestsEndpoint']),
    storageType: field('manifestsStorageType', spec['manifestsStorageType']),
    // Checked with a stand-in commit while waiting: a Reconciler at fault says so at once.
    commit: field('deployment.gitOpsCommitId', waiting === undefined ? commit : 'pending'),
    status,
    message: deployment['statusMessage'],
    observedAt: lastWriteTime(object) ?? receivedAt,
  });
  if (!outcome.ok) return { kind: 'invalid', reason: outcome.reason };
  return waiting === undefined ? { kind: 'recorded', record: outcome.value, warnings } : { kind: 'waiting', why: waiting };
}

function field(name: string, value: unknown): Field {
  return { name: `spec.${name}`, value };
}

interface Vocabulary {
  readonly allowed: readonly string[];
  readonly aliases: Readonly<Record<string, string>>;
  /** What the record says instead of a value it does not know. */
  readonly fallback: string;
  readonly warnUnset: boolean;
}

/** The field if it names a value of the vocabulary; else nothing (the fallback), with a warning saying so. */
function leniently(value: Field, vocabulary: Vocabulary, warnings: string[]): Field {
  const read = new FieldReader();
  const known = read.optionalEnum(value.name, value.value, vocabulary.allowed, vocabulary.aliases);
  if (read.problem !== undefined) warnings.push(`${read.problem}: recorded as ${vocabulary.fallback}`);
  else if (known === undefined && vocabulary.warnUnset) warnings.push(`${value.name} is not set: recorded as ${vocabulary.fallback}`);
  return { name: value.name, value: known };
}
