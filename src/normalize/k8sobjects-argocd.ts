// Argo CD Applications as the OpenTelemetry Collector's k8sobjects receiver sends them (CONTRACT
// 3.5): watch mode's `{type, object}` bodies, and the object itself as the body (pull mode, or a
// pipeline that moved the event type to an attribute), the cluster in `k8s.cluster.name`. The
// mapping is argocd-application.ts, the same the CRD watcher uses. Pure.
import type { NormalizedRecord } from '../model/deployment-records.ts';
import { ok, refused, type Result } from '../model/result.ts';
import { APPLICATION_KIND, APPLICATIONS, ARGOCD_GROUP } from '../wire/argocd-application.ts';
import { normalizeArgoApplication } from './argocd-application.ts';
import { FieldReader } from './field-reader.ts';

const WATCH_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED']);
/** Where a pipeline may have put the event type of a bare object (the receiver itself never does). */
const EVENT_TYPE_ATTRIBUTES = ['event.type', 'k8s.event.type'] as const;

function map(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The object and its event, from either shape; undefined for watch markers (BOOKMARK, ERROR, PullEnd). */
function unwrap(attribute: (key: string) => unknown, body: unknown): { object: Record<string, unknown>; type: unknown } | undefined {
  const envelope = map(body);
  if ('object' in envelope) return WATCH_TYPES.has(String(envelope['type'])) ? { object: map(envelope['object']), type: envelope['type'] } : undefined;
  const stated = EVENT_TYPE_ATTRIBUTES.map((key) => attribute(key)).find((value) => value !== undefined);
  return { object: envelope, type: typeof stated === 'string' ? stated.toUpperCase() : (stated ?? 'ADDED') };
}

/** Whether a log record is a k8sobjects record of an Argo CD Application (by its object, never by event.name). */
export function isArgoApplicationRecord(attribute: (key: string) => unknown, body: unknown): boolean {
  // Most records asked about are ordinary logs with a text body: no attribute lookups for those.
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const found = unwrap(attribute, body);
  if (found === undefined) return false;
  const apiVersion = found.object['apiVersion'];
  if (typeof apiVersion === 'string') return apiVersion.startsWith(`${ARGOCD_GROUP}/`) && found.object['kind'] === APPLICATION_KIND;
  return attribute('k8s.resource.name') === APPLICATIONS && Object.keys(found.object).length > 0;
}

/** The records of one Application record (several for a multi-source application; none while it has nothing to report). */
export function normalizeArgoRecord(attribute: (key: string) => unknown, body: unknown, seenAt: Date): Result<readonly NormalizedRecord[]> {
  const read = new FieldReader();
  const cluster = read.requiredString('resource attribute k8s.cluster.name', attribute('k8s.cluster.name'));
  const found = unwrap(attribute, body);
  if (found !== undefined && !WATCH_TYPES.has(String(found.type))) read.fail('event type', `must be ADDED, MODIFIED or DELETED (got ${JSON.stringify(found.type)})`);
  if (read.problem !== undefined || found === undefined) return refused(read.problem ?? 'body must be an Application or {type, object}');
  const namespace = attribute('k8s.namespace.name');
  const outcome = normalizeArgoApplication({
    object: found.object,
    event: found.type === 'DELETED' ? 'deleted' : 'upsert',
    localCluster: cluster,
    seenAt,
    prefix: 'object' in map(body) ? 'body.object.' : 'body.',
    ...(typeof namespace === 'string' && namespace !== '' ? { namespace } : {}),
  });
  return outcome.ok ? ok(outcome.value.records) : outcome;
}
