// Shared pieces of the property-based (fuzz) tests: how many runs, hostile strings and values,
// and mutations of valid inputs at any path.
import fc from 'fast-check';

/**
 * Runs per property. The fast variant keeps `npm test` quick; `npm run fuzz` sets
 * KALYPSO_FUZZ_RUNS for a soak run. `scale` is for properties far more costly than the rest.
 */
export function fuzzRuns(fast: number, scale = 1): number {
  const soak = Number(process.env.KALYPSO_FUZZ_RUNS ?? '');
  return Number.isInteger(soak) && soak > 0 ? Math.max(1, Math.round(soak * scale)) : fast;
}

/** Any UTF-16 code unit, lone surrogates included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));

/** Strings that have broken real services: NULs, lone surrogates, prototype keys, injections, huge. */
export const SPECIAL_STRINGS = [
  '',
  '   ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ufffd',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  "' OR '1'='1",
  "'; DROP TABLE host; --",
  '"); DELETE FROM reconciler; --',
  '%00',
  '%ED%A0%80',
  '%',
  '%zz',
  '../../etc/passwd',
  '\u202e\u200b',
  '😀',
  'null',
  'NaN',
  '-1',
  '1e309',
  '18446744073709551616',
] as const;

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_STRINGS) },
  { weight: 3, arbitrary: fc.string({ unit: codeUnit, maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('a', '\u0000', 'é', '\ud83d'), fc.integer({ min: 250, max: 70_000 })).map(([unit, n]) => unit.repeat(n)) },
);

/** A value nested `depth` levels deep in arrays or objects. */
export const deeplyNested: fc.Arbitrary<unknown> = fc
  .tuple(fc.integer({ min: 1, max: 1_000 }), fc.boolean())
  .map(([depth, asArray]) => {
    let value: unknown = 'leaf';
    for (let level = 0; level < depth; level += 1) value = asArray ? [value] : { nested: value };
    return value;
  });

/** Any JSON-ish value a hostile or broken sender could put anywhere. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 2, arbitrary: fc.anything({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, undefined, 0, -1, 1.5, Number.NaN, Infinity, -Infinity, 2 ** 64, true, false, [], {}, [null], { '': '' }) },
  { weight: 1, arbitrary: fc.bigInt() },
  { weight: 1, arbitrary: deeplyNested },
);

type Path = readonly (string | number)[];

/** Every path into a JSON value (objects and arrays), the root included. */
export function pathsOf(value: unknown, prefix: Path = []): Path[] {
  const paths: Path[] = [prefix];
  if (Array.isArray(value)) value.forEach((item, index) => paths.push(...pathsOf(item, [...prefix, index])));
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) paths.push(...pathsOf(item, [...prefix, key]));
  }
  return paths;
}

/** A copy of `value` with the thing at `path` replaced (or deleted, for `undefined` on an object key). */
export function setAt(value: unknown, path: Path, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) };
  const next = setAt(copy[head as never], rest, replacement);
  if (next === undefined && !Array.isArray(copy)) delete copy[head as never];
  else copy[head as never] = next;
  return copy;
}

/** Up to `max` mutations of a valid input: any path, any hostile value. */
export function mutationsOf(valid: unknown, max = 3): fc.Arbitrary<unknown> {
  const paths = pathsOf(valid);
  return fc
    .array(fc.tuple(fc.constantFrom(...paths), hostileValue), { minLength: 1, maxLength: max })
    .map((mutations) => mutations.reduce((value, [path, replacement]) => setAt(value, path, replacement), valid));
}

/** Every string inside `value` (keys too), for checking what a normalizer let through. */
export function stringsIn(value: unknown, seen = new Set<unknown>()): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value !== 'object' || value === null || seen.has(value) || value instanceof Date) return [];
  seen.add(value);
  return Object.entries(value).flatMap(([key, item]) => [key, ...stringsIn(item, seen)]);
}
