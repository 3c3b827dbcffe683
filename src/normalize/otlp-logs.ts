// One OTLP logs export request → normalized records, the records it rejects (with the field
// that was wrong) and a count of ordinary logs it ignores. Pure: no I/O, no clock.
//
// The normalizer is a LogsVisitor: the decoders hand it each record as they read it (see
// otlp-wire.ts), so no request tree is built on the way in.
import type { NormalizedRecord } from '../model/deployment-records.ts';
import {
  Attributes,
  type KeyValues,
  type LogRecordView,
  type LogRecordWire,
  type LogsRequestWire,
  type LogsVisitor,
  visitLogs,
} from '../wire/otlp-logs.ts';
import { normalizeDescriptorSpec } from './deployment-descriptor.ts';
import { type AttributeLookup, normalizeStateReport } from './deployment-state-report.ts';
import { isFluxObjectRecord, normalizeFluxObject } from './k8sobjects.ts';
import { isArgoApplicationRecord, normalizeArgoRecord } from './k8sobjects-argocd.ts';
import { refused } from '../model/result.ts';
import type { Normalized, NormalizedMany } from './normalize-result.ts';
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

/** Normalizes the records of a walk as they come; `result` once the walk is over. */
export class LogsNormalizer implements LogsVisitor {
  readonly #receivedAt: Date;
  readonly #limits: OtlpLimits;
  /** The workspaces the sender may send reports of; undefined for every one. */
  readonly #workspaces: ReadonlySet<string> | undefined;
  readonly #records: NormalizedRecord[] = [];
  readonly #rejections: Rejection[] = [];
  #ignored = 0;
  /** Records seen, normalized or not. */
  #seen = 0;
  #resource = new Attributes();
  #resourceProblem: string | undefined;
  #record: Attributes | undefined;
  /** Position of the current record: indexes of its resource, scope and record. */
  #r = -1;
  #s = -1;
  #l = -1;
  /** One lookup for the whole request (a record's attribute, else its resource's), not one per record. */
  readonly #attribute: AttributeLookup = (key) => this.#record?.get(key) ?? this.#resource.get(key);

  constructor(receivedAt: Date, limits: OtlpLimits = DEFAULT_OTLP_LIMITS, workspaces?: readonly string[]) {
    this.#receivedAt = receivedAt;
    this.#limits = limits;
    this.#workspaces = workspaces === undefined ? undefined : new Set(workspaces);
  }

  /** Records in the request so far. Past the request limit they are only counted (the caller refuses the request). */
  get recordCount(): number {
    return this.#seen;
  }

  resource(attributes: Attributes): void {
    this.#resource = attributes;
    this.#resourceProblem = attributeLimitProblem(attributes, 'resource', this.#limits);
    this.#r += 1;
    this.#s = -1;
  }

  scope(): void {
    this.#s += 1;
    this.#l = -1;
  }

  record(record: LogRecordView): void {
    this.#l += 1;
    this.#seen += 1;
    if (this.#seen > this.#limits.maxRecordsPerRequest) return;
    this.#record = record.attributes;
    const outcome = normalizeOne(this.#attribute, record, this.#receivedAt, this.#limits, this.#resourceProblem);
    this.#record = undefined;
    if (outcome === undefined) this.#ignored += 1;
    else if (!outcome.ok) this.#rejections.push({ position: this.#position(), reason: outcome.reason });
    else {
      const records = isMany(outcome.value) ? outcome.value : [outcome.value];
      const outside = this.#workspaces === undefined ? undefined : records.map((one) => outsideWorkspaces(one, this.#workspaces!)).find((reason) => reason !== undefined);
      if (outside !== undefined) this.#rejections.push({ position: this.#position(), reason: outside });
      else for (const one of records) this.#records.push(one);
    }
  }

  #position(): string {
    return `resource_logs[${this.#r}].scope_logs[${this.#s}].log_records[${this.#l}]`;
  }

  result(): NormalizedLogs {
    return { records: this.#records, rejected: this.#rejections, ignored: this.#ignored };
  }
}

/** A request already decoded into a tree (tests and tools). */
export function normalizeLogsRequest(request: LogsRequestWire, receivedAt: Date, limits: OtlpLimits = DEFAULT_OTLP_LIMITS): NormalizedLogs {
  const normalizer = new LogsNormalizer(receivedAt, limits);
  visitLogs(request, normalizer);
  return normalizer.result();
}

/** One record of a tree; undefined for records that are not ours (or that have nothing to report yet). */
export function normalizeLogRecord(resource: KeyValues, record: LogRecordWire, receivedAt: Date, limits: OtlpLimits = DEFAULT_OTLP_LIMITS): Normalized | NormalizedMany | undefined {
  const resourceAttributes = Attributes.of(resource);
  const recordAttributes = Attributes.of(record.attributes);
  return normalizeOne(
    (key) => recordAttributes.get(key) ?? resourceAttributes.get(key),
    { ...record, attributes: recordAttributes },
    receivedAt,
    limits,
    attributeLimitProblem(resourceAttributes, 'resource', limits),
  );
}

/** Whose k8sobjects record it is: the receiver puts the object's name in event.name, so its records are told by shape. */
function k8sObjectsKind(kind: unknown, attribute: AttributeLookup, body: unknown): 'flux' | 'argocd' | undefined {
  if (kind === RECORD_KINDS.state || kind === RECORD_KINDS.descriptor) return undefined;
  if (isFluxObjectRecord(attribute, body)) return 'flux';
  return isArgoApplicationRecord(attribute, body) ? 'argocd' : undefined;
}

function normalizeOne(
  attribute: AttributeLookup,
  record: LogRecordView,
  receivedAt: Date,
  limits: OtlpLimits,
  resourceProblem: string | undefined,
): Normalized | NormalizedMany | undefined {
  const kind = record.eventName !== '' ? record.eventName : record.attributes.get('event.name');
  const k8sObject = k8sObjectsKind(kind, attribute, record.body);
  if (k8sObject === undefined && kind !== RECORD_KINDS.state && kind !== RECORD_KINDS.descriptor) return undefined;
  // Limits hold for the records the hub reads; ordinary logs are ignored whatever they carry.
  const limitProblem = resourceProblem ?? attributeLimitProblem(record.attributes, 'record', limits);
  if (limitProblem !== undefined) return refused(`${k8sObject !== undefined ? 'k8sobjects record' : (kind as string)}: ${limitProblem}`);
  const observedAt = recordTime(record, receivedAt);
  if (k8sObject === 'flux') {
    const outcome = normalizeFluxObject(attribute, record.body, observedAt);
    return outcome.ok ? outcome : refused(`k8sobjects record: ${outcome.reason}`);
  }
  if (k8sObject === 'argocd') {
    const outcome = normalizeArgoRecord(attribute, record.body, observedAt);
    // An application Argo CD has not compared yet has nothing to report: ignored, like other logs.
    if (outcome.ok) return outcome.value.length === 0 ? undefined : outcome;
    return refused(`k8sobjects record (Argo CD Application): ${outcome.reason}`);
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

/**
 * Why a sender restricted to `workspaces` may not send the record, if it may not: a descriptor of
 * another workspace, or a record that names no workspace (a reconciler's state, a Flux or Argo CD
 * object: which workspaces it concerns follows from targets that may not even be known yet, so it is
 * refused rather than guessed).
 */
function outsideWorkspaces(record: NormalizedRecord, workspaces: ReadonlySet<string>): string | undefined {
  const allowed = [...workspaces].sort().join(', ');
  if (record.kind === 'desired-state') {
    return workspaces.has(record.workspace)
      ? undefined
      : `${RECORD_KINDS.descriptor}: body.workload.application.workspace.name: ${JSON.stringify(record.workspace)} is not among the workspaces this credential may send (${allowed})`;
  }
  const what = record.kind === 'flux-object' ? 'a Flux object' : record.kind === 'reconciler-removed' ? 'a removed reconciler' : 'a reconciler’s state';
  return `${what} names no workspace, and this credential may send only for workspaces ${allowed} (their deployment descriptors): send real state with an ingest credential for every workspace`;
}

function isMany(value: NormalizedRecord | readonly NormalizedRecord[]): value is readonly NormalizedRecord[] {
  return Array.isArray(value);
}

/** `time_unix_nano`, else `observed_time_unix_nano`, else the time the hub received the record. */
function recordTime(record: LogRecordView, receivedAt: Date): Date {
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
