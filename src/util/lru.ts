/**
 * A small cache that forgets: at most `maxEntries` entries, each trusted for `ttlMs`. When full,
 * the least recently used entry goes first (a `Map` keeps insertion order, and a hit moves its
 * entry to the end). Expired entries are dropped when met.
 */
export class BoundedCache<V> {
  readonly #entries = new Map<string, { value: V; at: number }>();

  constructor(
    readonly maxEntries: number,
    readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1)
      throw new RangeError('maxEntries must be at least 1');
  }

  /** The value, if it is there and still fresh; marks it recently used. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    if (this.now() - entry.at >= this.ttlMs) return undefined;
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Stores a fresh value, forgetting the least recently used entries beyond the bound. */
  set(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, at: this.now() });
    while (this.#entries.size > this.maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value as string);
    }
  }

  /** Forgets the entry, if there is one. */
  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Entries held, fresh or not yet found stale. */
  get size(): number {
    return this.#entries.size;
  }
}
