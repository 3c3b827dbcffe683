// GitOps commit ids arrive in several spellings: Flux v2 reports `main@sha1:<hex>`, older Flux
// and Arc report `main/<hex>`, OCI sources `latest@sha256:<hex>`, CD pipelines a bare hex.
// Desired and real state are correlated by commit, so all of them must compare equal.

/** The shortest prefix of a commit id the hub resolves (as UIs and CLIs show them: 7 hex digits or more). */
export const MIN_COMMIT_PREFIX = 7;

const DIGEST = /^(?:.+@)?(?:sha1|sha256):([0-9a-f]{7,64})$/i;
const BRANCH_SLASH_HEX = /^.+\/([0-9a-f]{40}|[0-9a-f]{64})$/i;
const BARE_HEX = /^[0-9a-f]{7,64}$/i;

/**
 * The canonical form of a commit id: lower-case hex when the input carries a hash in any of
 * the known spellings; otherwise the trimmed input (a tag or another opaque revision).
 */
export function canonicalCommitId(raw: string): string {
  const value = raw.trim();
  // Bare hex first: the commonest spelling, and one the other two cannot match (they need `:` or
  // `/`). Tried last, every report's commit went through two failing patterns first.
  if (BARE_HEX.test(value)) return value.toLowerCase();
  const digest = DIGEST.exec(value) ?? BRANCH_SLASH_HEX.exec(value);
  return digest?.[1] !== undefined ? digest[1].toLowerCase() : value;
}
