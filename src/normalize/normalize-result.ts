import type { NormalizedRecord } from '../model/deployment-records.ts';

/** The outcome of normalizing one input record: expected failures are values, not exceptions. */
export type Normalized<T extends NormalizedRecord = NormalizedRecord> =
  | { readonly ok: true; readonly record: T }
  | { readonly ok: false; readonly reason: string };

export function accepted<T extends NormalizedRecord>(record: T): Normalized<T> {
  return { ok: true, record };
}

export function rejected(reason: string): Normalized<never> {
  return { ok: false, reason };
}
