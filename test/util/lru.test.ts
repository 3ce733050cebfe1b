import { describe, expect, it } from 'vitest';
import { BoundedCache } from '../../src/util/lru.js';

describe('BoundedCache', () => {
  it('never holds more than its bound, however many keys pass through', () => {
    const cache = new BoundedCache<number>(100, 60_000);
    for (let i = 0; i < 20_000; i++) {
      cache.set(`U${i}`, i);
      expect(cache.size).toBeLessThanOrEqual(100);
    }
    expect(cache.size).toBe(100);
    // The most recent ones are the ones kept.
    expect(cache.get('U19999')).toBe(19_999);
    expect(cache.get('U19900')).toBe(19_900);
    expect(cache.get('U19899')).toBeUndefined();
  });

  it('forgets the least recently used entry first: a hit keeps an entry', () => {
    const cache = new BoundedCache<string>(3, 60_000);
    cache.set('a', 'A');
    cache.set('b', 'B');
    cache.set('c', 'C');
    expect(cache.get('a')).toBe('A');
    cache.set('d', 'D');
    expect(cache.get('b')).toBeUndefined();
    expect([cache.get('a'), cache.get('c'), cache.get('d')]).toEqual(['A', 'C', 'D']);
  });

  it('trusts an entry for its time to live only, and drops it when found stale', () => {
    let now = 0;
    const cache = new BoundedCache<string>(10, 1_000, () => now);
    cache.set('a', 'A');
    now = 999;
    expect(cache.get('a')).toBe('A');
    now = 1_000;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
    // Setting again starts a fresh period.
    cache.set('a', 'A2');
    now = 1_500;
    expect(cache.get('a')).toBe('A2');
  });

  it('forgets an entry on demand, and only that one', () => {
    const cache = new BoundedCache<string>(4, 1_000, () => 0);
    cache.set('a', 'A');
    cache.set('b', 'B');
    cache.delete('a');
    cache.delete('missing');
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBe('B');
    expect(cache.size).toBe(1);
  });

  it('refuses a bound below one', () => {
    expect(() => new BoundedCache(0, 1)).toThrow(RangeError);
  });
});
