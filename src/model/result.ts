// A value, or the reason there is none. Expected failures — a setting that does not parse, a
// record that does not normalize, a commit prefix that names no commit — travel as this one value
// rather than as exceptions, so that each caller decides what a refusal means to it (stop start-up,
// reject one log record, answer 400) and TypeScript makes it look before it takes the value.

export type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function refused(reason: string): Result<never> {
  return { ok: false, reason };
}
