// Reads the fields of one input record and remembers the first problem, so a normalizer can be
// written top to bottom and still reject the record with a message that names the bad field.

/** Upper bounds on stored strings; Kubernetes-style names are at most 253 characters. */
export const FIELD_LIMITS = {
  name: 253,
  token: 63,
  endpoint: 2048,
  commit: 256,
  version: 256,
  /** Longer status messages are cut, not rejected: the state itself is still worth keeping. */
  message: 16_384,
} as const;

export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (value instanceof Uint8Array) return 'bytes';
  if (typeof value === 'object') return 'map';
  return typeof value;
}

export class FieldReader {
  #problem: string | undefined;

  /** The first problem found, as `field: what is wrong`, or undefined when all fields were fine. */
  get problem(): string | undefined {
    return this.#problem;
  }

  fail(field: string, problem: string): void {
    this.#problem ??= `${field} ${problem}`;
  }

  /** A non-empty string of at most `maxLength` characters; '' (and a recorded problem) otherwise. */
  requiredString(field: string, value: unknown, maxLength: number = FIELD_LIMITS.name): string {
    // Blank counts as missing: a name of spaces would be stored as ''.
    if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
      this.fail(field, 'is missing');
      return '';
    }
    return this.optionalString(field, value, maxLength) ?? '';
  }

  optionalString(field: string, value: unknown, maxLength: number = FIELD_LIMITS.name): string | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') {
      this.fail(field, `must be a string, got ${describeType(value)}`);
      return undefined;
    }
    const trimmed = value.trim();
    if (trimmed.includes('\u0000')) {
      this.fail(field, 'contains a NUL character');
      return undefined;
    }
    // A lone surrogate (JSON `\ud800`, or invalid UTF-8 in protobuf, which the decoders turn into
    // lone surrogates) would be stored as U+FFFD: not the name that was sent, so refuse it.
    if (!trimmed.isWellFormed()) {
      this.fail(field, 'is not valid UTF-8 (invalid bytes or a lone surrogate)');
      return undefined;
    }
    if (trimmed.length > maxLength) {
      this.fail(field, `is longer than ${maxLength} characters`);
      return undefined;
    }
    return trimmed === '' ? undefined : trimmed;
  }

  /** A lower-case token such as a host type or storage type: letters, digits, `-`, `_`, `.`. */
  optionalToken(field: string, value: unknown): string | undefined {
    const text = this.optionalString(field, value, FIELD_LIMITS.token);
    if (text === undefined) return undefined;
    if (!/^[a-z0-9][a-z0-9._-]*$/i.test(text)) {
      this.fail(field, `must be a token of letters, digits, '.', '-' or '_' (got ${JSON.stringify(text)})`);
      return undefined;
    }
    return text.toLowerCase();
  }

  /** One of `allowed`, or an alias of one; matching ignores case and `-`/`_`. */
  optionalEnum<T extends string>(
    field: string,
    value: unknown,
    allowed: readonly T[],
    aliases: Readonly<Record<string, T>> = {},
  ): T | undefined {
    const text = this.optionalString(field, value, FIELD_LIMITS.token);
    if (text === undefined) return undefined;
    // Spelled as allowed, as nearly every report does: nothing to fold.
    if ((allowed as readonly string[]).includes(text)) return text as T;
    const key = text.toLowerCase().replaceAll('-', '_');
    // Own keys only: `constructor` or `__proto__` must not find Object's.
    const found = allowed.find((candidate) => candidate === key) ?? (Object.hasOwn(aliases, key) ? aliases[key] : undefined);
    if (found === undefined) {
      this.fail(field, `must be one of ${allowed.join(', ')} (got ${JSON.stringify(text)})`);
    }
    return found;
  }

  /**
   * A status message: any string, cut to the message limit. What PostgreSQL cannot store is
   * dropped (NUL) or replaced (lone surrogates become U+FFFD): a message is for people to read.
   */
  message(value: unknown): string {
    if (value === undefined || value === null) return '';
    const text = typeof value === 'string' ? value : (JSON.stringify(value, jsonSafe) ?? describeType(value));
    const clean = text.replaceAll('\u0000', '');
    // Cutting must not split a surrogate pair: cut first, then repair.
    const cut = clean.length > FIELD_LIMITS.message ? `${clean.slice(0, FIELD_LIMITS.message - 1)}…` : clean;
    return cut.toWellFormed();
  }

  /** An RFC 3339 timestamp string. */
  optionalTimestamp(field: string, value: unknown): Date | undefined {
    if (value instanceof Date) return value;
    const text = this.optionalString(field, value, 64);
    if (text === undefined) return undefined;
    const time = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(text) ? new Date(text) : undefined;
    if (time === undefined || Number.isNaN(time.getTime())) {
      this.fail(field, `must be an RFC 3339 timestamp (got ${JSON.stringify(text)})`);
      return undefined;
    }
    return time;
  }
}

function jsonSafe(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  return value;
}
