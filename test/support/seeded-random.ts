// Seeded randomness for tests that generate their input: a failure names its seed, and the same
// seed replays the same sequence.

/** A small seeded PRNG (mulberry32): uniform in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export interface SeededPicker {
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
}

export function seededPicker(seed: number): SeededPicker {
  const next = seededRandom(seed);
  const int = (n: number): number => Math.floor(next() * n);
  return { next, int, pick: (items) => items[int(items.length)]! };
}

/** The seed a generated test runs with: KALYPSO_TEST_SEED replays the sequence a failure named. */
export function testSeed(): number {
  return Number(process.env['KALYPSO_TEST_SEED'] ?? Date.now() % 1_000_000);
}
