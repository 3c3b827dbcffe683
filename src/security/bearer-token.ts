import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * Whether an `authorization` header carries one of the accepted bearer tokens. Compared in
 * constant time over digests (so neither the content nor the length of a token leaks), and
 * against every accepted token without stopping early (so neither does which one matched).
 */
export function bearerTokenMatches(header: string | undefined, accepted: readonly string[]): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(header?.trim() ?? '');
  const presented = digest(match?.[1] ?? '');
  let matched = false;
  for (const token of accepted) matched = timingSafeEqual(presented, digest(token)) || matched;
  return matched && match !== null;
}
