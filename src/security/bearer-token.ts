import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether an `authorization` header carries the expected bearer token. Compared in constant
 * time (over digests, so the length of the token does not leak either).
 */
export function bearerTokenMatches(header: string | undefined, expected: string): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(header?.trim() ?? '');
  const presented = match?.[1] ?? '';
  const digest = (value: string): Buffer => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(presented), digest(expected)) && presented !== '';
}
