// The decoded form of an OTLP logs export request, independent of its encoding (protobuf or
// JSON). Only what the hub reads is kept: resource attributes, record kind, times, attributes and
// body. Maps are null-prototype objects so that keys like `__proto__` are just keys.
//
// The receivers do not build the request as a tree: a decoder walks it and hands each record to a
// LogsVisitor as it goes (the normalizer, see normalize/otlp-logs.ts), in one reused LogRecordView.
// So no object is made per record beyond its body and what the normalizer keeps. The tree
// (LogsRequestWire) is for tests and tools: `collectLogs` builds it from a walk, `visitLogs` walks it.

export type AnyValue =
  | string
  | boolean
  | number
  | bigint
  | Uint8Array
  | readonly AnyValue[]
  | KeyValues
  | undefined;

export interface KeyValues {
  readonly [key: string]: AnyValue;
}

export interface LogRecordWire {
  /** Nanoseconds since the Unix epoch; 0n when unset. */
  readonly timeUnixNano: bigint;
  readonly observedTimeUnixNano: bigint;
  /** `event_name` (field 12); '' when unset. */
  readonly eventName: string;
  readonly attributes: KeyValues;
  readonly body: AnyValue;
}

export interface ResourceLogsWire {
  readonly resourceAttributes: KeyValues;
  readonly scopeLogs: readonly { readonly logRecords: readonly LogRecordWire[] }[];
}

export interface LogsRequestWire {
  readonly resourceLogs: readonly ResourceLogsWire[];
}

export function emptyKeyValues(): Record<string, AnyValue> {
  return Object.create(null) as Record<string, AnyValue>;
}

/** Where a decoder puts the key-value pairs it reads: Attributes, or the map of a kvlist value. */
export interface PairSink {
  add(key: string, value: AnyValue): void;
}

/** A kvlist value's map, filled pair by pair: a later pair with the same key wins. */
export class KeyValuesBuilder implements PairSink {
  readonly map = emptyKeyValues();

  add(key: string, value: AnyValue): void {
    this.map[key] = value;
  }
}

/**
 * Attributes as they came: keys and values in arrival order, a later pair with the same key
 * winning. Two arrays rather than a map: a record has a handful of attributes, a scan of them is
 * cheaper than building a dictionary per record, and the arrays are reused from record to record.
 */
export class Attributes implements PairSink {
  readonly #keys: string[] = [];
  readonly #values: AnyValue[] = [];
  #length = 0;

  /** Pairs, duplicates included. */
  get length(): number {
    return this.#length;
  }

  add(key: string, value: AnyValue): void {
    this.#keys[this.#length] = key;
    this.#values[this.#length] = value;
    this.#length += 1;
  }

  get(key: string): AnyValue {
    for (let i = this.#length - 1; i >= 0; i -= 1) if (this.#keys[i] === key) return this.#values[i];
    return undefined;
  }

  keyAt(index: number): string {
    return this.#keys[index]!;
  }

  valueAt(index: number): AnyValue {
    return this.#values[index];
  }

  /** Whether a later pair has the same key as the one at `index` (and so hides it). */
  isHidden(index: number): boolean {
    const key = this.#keys[index];
    for (let i = index + 1; i < this.#length; i += 1) if (this.#keys[i] === key) return true;
    return false;
  }

  /** Empties the list for the next record; values are dropped so nothing is held past its record. */
  clear(): void {
    this.#values.fill(undefined, 0, this.#length);
    this.#length = 0;
  }

  /** Empties the list and fills it from a map. */
  assign(keyValues: KeyValues): this {
    this.clear();
    for (const key of Object.keys(keyValues)) this.add(key, keyValues[key]);
    return this;
  }

  toKeyValues(): KeyValues {
    const result = new KeyValuesBuilder();
    for (let i = 0; i < this.#length; i += 1) result.add(this.#keys[i]!, this.#values[i]);
    return result.map;
  }

  static of(keyValues: KeyValues): Attributes {
    return new Attributes().assign(keyValues);
  }
}

/** One log record during a walk. The walker reuses it for the next record: keep values, not it. */
export interface LogRecordView {
  timeUnixNano: bigint;
  observedTimeUnixNano: bigint;
  eventName: string;
  readonly attributes: Attributes;
  body: AnyValue;
}

/** A view for a walk to read its records into, one after the other. */
export function newLogRecordView(): LogRecordView {
  return { timeUnixNano: 0n, observedTimeUnixNano: 0n, eventName: '', attributes: new Attributes(), body: undefined };
}

/** What a walk over a request calls, in the request's order. */
export interface LogsVisitor {
  /** A ResourceLogs begins; its attributes hold for the records until the next one. */
  resource(attributes: Attributes): void;
  /** A ScopeLogs of the current resource begins. */
  scope(): void;
  /** A record of the current scope. */
  record(record: LogRecordView): void;
}

/** A walker: the protobuf or JSON decoder over one request body. */
export type LogsWalk = (visitor: LogsVisitor) => void;

/** The request as a tree, from a walk. */
export function collectLogs(walk: LogsWalk): LogsRequestWire {
  const resourceLogs: { resourceAttributes: KeyValues; scopeLogs: { logRecords: LogRecordWire[] }[] }[] = [];
  walk({
    resource: (attributes) => resourceLogs.push({ resourceAttributes: attributes.toKeyValues(), scopeLogs: [] }),
    scope: () => resourceLogs.at(-1)!.scopeLogs.push({ logRecords: [] }),
    record: (record) =>
      resourceLogs
        .at(-1)!
        .scopeLogs.at(-1)!
        .logRecords.push({
          timeUnixNano: record.timeUnixNano,
          observedTimeUnixNano: record.observedTimeUnixNano,
          eventName: record.eventName,
          attributes: record.attributes.toKeyValues(),
          body: record.body,
        }),
  });
  return { resourceLogs };
}

/** Walks a request already decoded into a tree. */
export function visitLogs(request: LogsRequestWire, visitor: LogsVisitor): void {
  const view = newLogRecordView();
  for (const resourceLogs of request.resourceLogs) {
    visitor.resource(Attributes.of(resourceLogs.resourceAttributes));
    for (const scopeLogs of resourceLogs.scopeLogs) {
      visitor.scope();
      for (const record of scopeLogs.logRecords) {
        view.attributes.assign(record.attributes);
        view.timeUnixNano = record.timeUnixNano;
        view.observedTimeUnixNano = record.observedTimeUnixNano;
        view.eventName = record.eventName;
        view.body = record.body;
        visitor.record(view);
      }
    }
  }
}

/** An error in the payload itself: the request cannot be decoded at all (answered as permanent). */
export class OtlpDecodeError extends Error {
  override readonly name = 'OtlpDecodeError';
}
