// What every normalized record must satisfy before it reaches the store, whatever its input:
// PostgreSQL `text` cannot hold NUL, lone surrogates would be stored as U+FFFD (not what was
// sent), timestamps must be within timestamptz's range, and the identifying fields must be set.
import { expect } from 'vitest';
import { DEPLOYMENT_STATUSES, RECONCILER_TYPES, type NormalizedRecord } from '../../src/model/deployment-records.ts';
import { FIELD_LIMITS } from '../../src/normalize/field-reader.ts';
import { stringsIn } from './fuzz.ts';

/** timestamptz holds 4713 BC to 294276 AD; JavaScript dates reach further back. */
const PG_MIN_MS = Date.UTC(-4712, 0, 1);
const PG_MAX_MS = 8_640_000_000_000_000;

export function expectStorable(record: NormalizedRecord): void {
  for (const text of stringsIn(record)) {
    expect(text.includes('\u0000'), `NUL in ${JSON.stringify(text)}`).toBe(false);
    expect(text.isWellFormed(), `lone surrogate in ${JSON.stringify(text)}`).toBe(true);
  }
  for (const date of datesIn(record)) {
    expect(Number.isNaN(date.getTime())).toBe(false);
    expect(date.getTime()).toBeGreaterThanOrEqual(PG_MIN_MS);
    expect(date.getTime()).toBeLessThanOrEqual(PG_MAX_MS);
  }
  const name = (value: string, max: number = FIELD_LIMITS.name) => {
    expect(value.trim()).not.toBe('');
    expect(value.length).toBeLessThanOrEqual(max);
  };
  switch (record.kind) {
    case 'real-state':
      name(record.host.name);
      name(record.reconciler.name);
      name(record.manifests.endpoint, FIELD_LIMITS.endpoint);
      name(record.commitId, FIELD_LIMITS.commit);
      expect(DEPLOYMENT_STATUSES).toContain(record.status);
      expect(RECONCILER_TYPES).toContain(record.reconciler.type);
      expect(record.statusMessage.length).toBeLessThanOrEqual(FIELD_LIMITS.message);
      break;
    case 'desired-state':
      for (const value of [record.workspace, record.application, record.workload.name, record.environment, record.deploymentTarget.name]) name(value);
      name(record.deploymentTarget.manifests.endpoint, FIELD_LIMITS.endpoint);
      name(record.commitId, FIELD_LIMITS.commit);
      name(record.workloadVersion.version, FIELD_LIMITS.version);
      break;
    case 'flux-object':
      name(record.cluster);
      name(record.name);
      name(record.namespace);
      break;
    case 'reconciler-removed':
      name(record.host);
      name(record.reconciler);
      break;
  }
}

function datesIn(value: unknown, seen = new Set<unknown>()): Date[] {
  if (value instanceof Date) return [value];
  if (typeof value !== 'object' || value === null || seen.has(value)) return [];
  seen.add(value);
  return Object.values(value).flatMap((item) => datesIn(item, seen));
}
