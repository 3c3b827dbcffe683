import { describe, expect, it } from 'vitest';
import { canonicalCommitId } from '../../src/model/commit-id.ts';

const HEX = '4f6e2a9c1d3b5e7f9a0b2c4d6e8f0a1b3c5d7e9f';

describe('canonicalCommitId', () => {
  it.each([
    ['bare hex', HEX],
    ['upper-case hex', HEX.toUpperCase()],
    ['flux v2 revision', `dev@sha1:${HEX}`],
    ['branch with slashes', `feature/x@sha1:${HEX}`],
    ['digest only', `sha1:${HEX}`],
    ['older flux / arc revision', `dev/${HEX}`],
    ['surrounding whitespace', `  ${HEX}\n`],
  ])('reduces %s to the hex id', (_name, raw) => {
    expect(canonicalCommitId(raw)).toBe(HEX);
  });

  it('keeps sha256 digests (OCI sources)', () => {
    const digest = 'a'.repeat(64);
    expect(canonicalCommitId(`latest@sha256:${digest}`)).toBe(digest);
  });

  it('leaves revisions that carry no hash as they are', () => {
    expect(canonicalCommitId('v1.2.3')).toBe('v1.2.3');
    expect(canonicalCommitId('feature/not-a-hash')).toBe('feature/not-a-hash');
  });

  it('does not mistake a branch ending in short hex for a commit', () => {
    expect(canonicalCommitId('release/abc123')).toBe('release/abc123');
  });
});
