// Random ids for tests: commits and names that no code can sort into the right order by luck
// (hand-picked ids once hid a desired state chosen by the commit's hex text).
import { randomBytes, randomUUID } from 'node:crypto';

/** A full 40-hex Git commit id. */
export function randomCommit(): string {
  return randomBytes(20).toString('hex');
}

/** `prefix-xxxxxxxx`: a name unique to this run. */
export function randomName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}
