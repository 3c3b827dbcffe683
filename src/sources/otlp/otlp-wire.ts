// The decoded form of an OTLP logs export request, independent of its encoding (protobuf or
// JSON). Only what the hub reads is kept: resource attributes, record kind, times, attributes and
// body. Maps are null-prototype objects so that keys like `__proto__` are just keys.

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

/** An error in the payload itself: the request cannot be decoded at all (answered as permanent). */
export class OtlpDecodeError extends Error {
  override readonly name = 'OtlpDecodeError';
}
