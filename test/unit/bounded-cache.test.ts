// The id caches' memory bound: never more than the capacity, and what is in use stays.
import { describe, expect, it } from 'vitest';
import { BoundedCache } from '../../src/store/bounded-cache.ts';

describe('BoundedCache', () => {
  it('holds at most its capacity however many keys pass through it', () => {
    const cache = new BoundedCache<number, number>(100);
    for (let i = 0; i < 10_000; i += 1) {
      cache.set(i, i * 2);
      expect(cache.size).toBeLessThanOrEqual(100);
    }
    expect(cache.get(9_999)).toBe(19_998);
    expect(cache.get(0)).toBeUndefined();
  });

  it('keeps an entry that is used while many others come and go', () => {
    const cache = new BoundedCache<string, number>(100);
    cache.set('hot', 1);
    for (let i = 0; i < 10_000; i += 1) {
      cache.set(`cold-${i}`, i);
      // Used once every 40 writes: within half the capacity, so it is never dropped.
      if (i % 40 === 0) expect(cache.get('hot')).toBe(1);
    }
    expect(cache.get('hot')).toBe(1);
    expect(cache.get('cold-0')).toBeUndefined();
  });

  it('answers the newest value of a key, and forgets everything on clear', () => {
    const cache = new BoundedCache<string, number>(4);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    cache.set('a', 10);
    expect(cache.get('a')).toBe(10);
    expect(cache.size).toBe(3);
    cache.clear();
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });
});
