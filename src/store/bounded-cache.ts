// A map that forgets its least recently used entries beyond a size, so id caches stay small
// however large the fleet grows.
//
// Two generations instead of an exact LRU list: entries are written to the young map; when it is
// full it becomes the old one and the previous old one is dropped. A hit in the old map moves the
// entry to the young one. So an entry used at least once per `capacity / 2` writes stays, and at
// most `capacity` entries are held. A hit costs one or two lookups and nothing else: an exact LRU
// re-inserted the entry on every hit (a delete and a set per record on the ingest path, 4 % of the
// hub's CPU under load).
export class BoundedCache<K, V> {
  #young = new Map<K, V>();
  #old = new Map<K, V>();
  readonly #generationSize: number;

  constructor(capacity: number) {
    this.#generationSize = Math.max(1, Math.floor(capacity / 2));
  }

  get(key: K): V | undefined {
    const young = this.#young.get(key);
    if (young !== undefined) return young;
    const old = this.#old.get(key);
    if (old !== undefined) this.#put(key, old);
    return old;
  }

  set(key: K, value: V): void {
    this.#put(key, value);
  }

  get size(): number {
    let size = this.#young.size;
    for (const key of this.#old.keys()) if (!this.#young.has(key)) size += 1;
    return size;
  }

  clear(): void {
    this.#young.clear();
    this.#old.clear();
  }

  #put(key: K, value: V): void {
    if (!this.#young.has(key) && this.#young.size >= this.#generationSize) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(key, value);
  }
}
