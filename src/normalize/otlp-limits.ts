// Limits on what one OTLP request may carry, beyond its size in bytes. Defaults are generous for
// real collectors (a collector batch is typically 8,192 records; semantic-convention attributes
// are short; resources carry a few dozen attributes) and still stop a request from making the hub
// build millions of objects for one sender.
import type { AnyValue, Attributes, KeyValues } from '../wire/otlp-logs.ts';

export interface OtlpLimits {
  /** Records in one request; more refuses the whole request (413 / RESOURCE_EXHAUSTED). */
  readonly maxRecordsPerRequest: number;
  /** Distinct attributes on one record, and on one resource; more rejects the record. */
  readonly maxAttributes: number;
  /** Characters (or bytes, for bytes values) in one attribute key or value, nested values included; longer rejects the record. */
  readonly maxAttributeValueLength: number;
}

export const DEFAULT_OTLP_LIMITS: OtlpLimits = {
  // 12 × the collector's default batch; 100,000 minimal records are ~5 MB of protobuf.
  maxRecordsPerRequest: 100_000,
  // The OpenTelemetry SDKs' default attribute count limit is 128; twice that leaves room.
  maxAttributes: 256,
  // Kalypso's own fields are at most 2,048 characters; 64 KiB leaves room for any sane attribute.
  maxAttributeValueLength: 65_536,
};

/**
 * Why `attributes` exceed the limits, as a reason that names the attribute and the limit, or
 * undefined when they do not. Only Kalypso's records are held to it: ordinary logs are ignored
 * whatever they carry.
 */
export function attributeLimitProblem(attributes: Attributes, where: 'record' | 'resource', limits: OtlpLimits): string | undefined {
  // A pair hidden by a later one with the same key was never an attribute: count and check the others.
  const count = distinctCount(attributes);
  if (count > limits.maxAttributes) {
    return `the ${where} has ${count} attributes; the limit is ${limits.maxAttributes} (--max-attributes)`;
  }
  const prefix = where === 'resource' ? 'resource attribute' : 'attribute';
  for (let i = 0; i < attributes.length; i += 1) {
    const key = attributes.keyAt(i);
    if (key.length > limits.maxAttributeValueLength) {
      return `${prefix} key ${JSON.stringify(key.slice(0, 64))}… is ${key.length} characters long; the limit is ${limits.maxAttributeValueLength} (--max-attribute-value-length)`;
    }
    const length = longestValue(attributes.valueAt(i));
    if (length > limits.maxAttributeValueLength && !attributes.isHidden(i)) {
      return `${prefix} ${key} is ${length} characters long; the limit is ${limits.maxAttributeValueLength} (--max-attribute-value-length)`;
    }
  }
  return undefined;
}

/** Keys counted once each: by scanning when there are few (every real record), by a set otherwise. */
function distinctCount(attributes: Attributes): number {
  if (attributes.length <= 32) {
    let count = 0;
    for (let i = 0; i < attributes.length; i += 1) if (!attributes.isHidden(i)) count += 1;
    return count;
  }
  const keys = new Set<string>();
  for (let i = 0; i < attributes.length; i += 1) keys.add(attributes.keyAt(i));
  return keys.size;
}

/** The longest string (or bytes value) in a value, arrays and maps included. */
function longestValue(value: AnyValue): number {
  if (typeof value === 'string' || value instanceof Uint8Array) return value.length;
  if (Array.isArray(value)) return value.reduce<number>((longest, item: AnyValue) => Math.max(longest, longestValue(item)), 0);
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value as KeyValues).reduce((longest, [key, item]) => Math.max(longest, key.length, longestValue(item)), 0);
  }
  return 0;
}
