// One OTLP logs export request → normalized records, the records it rejects (with the field
// that was wrong) and a count of ordinary logs it ignores. Pure: no I/O, no clock.
import type { NormalizedRecord } from '../model/deployment-records.ts';
import type { KeyValues, LogRecordWire, LogsRequestWire } from '../sources/otlp/otlp-wire.ts';
import { normalizeDescriptorSpec } from './deployment-descriptor.ts';
import { type AttributeLookup, normalizeStateReport } from './deployment-state-report.ts';
import { isFluxObjectRecord, normalizeFluxObject } from './k8sobjects.ts';
import { refused } from '../model/result.ts';
import type { Normalized } from './normalize-result.ts';
import { attributeLimitProblem, DEFAULT_OTLP_LIMITS, type OtlpLimits } from './otlp-limits.ts';

export const RECORD_KINDS = {
  state: 'kalypso.deployment.state',
  descriptor: 'kalypso.deployment.descriptor',
} as const;

export interface Rejection {
  /** Position of the record in the request, e.g. `resource_logs[0].scope_logs[1].log_records[7]`. */
  readonly position: string;
  readonly reason: string;
}

export interface NormalizedLogs {
  readonly records: NormalizedRecord[];
  readonly rejected: Rejection[];
  /** Records of other kinds (ordinary logs): not ours, never an error. */
  readonly ignored: number;
}

export function normalizeLogsRequest(request: LogsRequestWire, receivedAt: Date, limits: OtlpLimits = DEFAULT_OTLP_LIMITS): NormalizedLogs {
  const records: NormalizedRecord[] = [];
  const rejections: Rejection[] = [];
  let ignored = 0;
  request.resourceLogs.forEach((resourceLogs, r) => {
    const resourceProblem = attributeLimitProblem(resourceLogs.resourceAttributes, 'resource', limits);
    resourceLogs.scopeLogs.forEach((scopeLogs, s) => {
      scopeLogs.logRecords.forEach((record, l) => {
        const outcome = normalizeLogRecord(resourceLogs.resourceAttributes, record, receivedAt, limits, resourceProblem);
        if (outcome === undefined) ignored += 1;
        else if (outcome.ok) records.push(outcome.value);
        else {
          rejections.push({
            position: `resource_logs[${r}].scope_logs[${s}].log_records[${l}]`,
            reason: outcome.reason,
          });
        }
      });
    });
  });
  return { records, rejected: rejections, ignored };
}

/** undefined for records that are not ours. */
export function normalizeLogRecord(
  resource: KeyValues,
  record: LogRecordWire,
  receivedAt: Date,
  limits: OtlpLimits = DEFAULT_OTLP_LIMITS,
  resourceProblem: string | undefined = attributeLimitProblem(resource, 'resource', limits),
): Normalized | undefined {
  const attribute: AttributeLookup = (key) => record.attributes[key] ?? resource[key];
  const kind = record.eventName !== '' ? record.eventName : record.attributes['event.name'];
  const fluxObject = kind !== RECORD_KINDS.state && kind !== RECORD_KINDS.descriptor && isFluxObjectRecord(attribute, record.body);
  if (!fluxObject && kind !== RECORD_KINDS.state && kind !== RECORD_KINDS.descriptor) return undefined;
  // Limits hold for the records the hub reads; ordinary logs are ignored whatever they carry.
  const limitProblem = resourceProblem ?? attributeLimitProblem(record.attributes, 'record', limits);
  if (limitProblem !== undefined) return refused(`${fluxObject ? 'k8sobjects record' : (kind as string)}: ${limitProblem}`);
  const observedAt = recordTime(record, receivedAt);
  // The k8sobjects receiver puts the object's name in event.name: tell its records by shape.
  if (fluxObject) {
    const outcome = normalizeFluxObject(attribute, record.body, observedAt);
    return outcome.ok ? outcome : refused(`k8sobjects record: ${outcome.reason}`);
  }
  switch (kind) {
    case RECORD_KINDS.state: {
      const outcome = normalizeStateReport(attribute, record.body, observedAt);
      return outcome.ok ? outcome : refused(`${RECORD_KINDS.state}: ${outcome.reason}`);
    }
    case RECORD_KINDS.descriptor: {
      const outcome = normalizeDescriptorSpec(descriptorBody(record.body), {
        prefix: 'body',
        commitId: attribute('vcs.ref.head.revision') ?? attribute('kalypso.gitops.commit_id'),
        commitField: attribute('vcs.ref.head.revision') === undefined && attribute('kalypso.gitops.commit_id') !== undefined ? 'kalypso.gitops.commit_id' : 'vcs.ref.head.revision',
        assignedAt: observedAt,
      });
      return outcome.ok ? outcome : refused(`${RECORD_KINDS.descriptor}: ${outcome.reason}`);
    }
    default:
      return undefined;
  }
}

/** `time_unix_nano`, else `observed_time_unix_nano`, else the time the hub received the record. */
function recordTime(record: LogRecordWire, receivedAt: Date): Date {
  const nanos = record.timeUnixNano !== 0n ? record.timeUnixNano : record.observedTimeUnixNano;
  if (nanos === 0n) return receivedAt;
  const millis = nanos / 1_000_000n;
  // Beyond the range of a Date (or of Postgres' timestamptz) the time is garbage: use receipt.
  return millis > 8_640_000_000_000_000n ? receivedAt : new Date(Number(millis));
}

/** A descriptor body is a map, or a JSON string holding the same map. */
function descriptorBody(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}
