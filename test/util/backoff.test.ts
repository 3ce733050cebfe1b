import { describe, expect, it } from 'vitest';
import { backoffMs } from '../../src/util/backoff.js';

describe('backoffMs', () => {
  it('waits the first delay after one failure, doubling with each further one', () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(1_000, n, 60_000))).toEqual([1_000, 2_000, 4_000, 8_000]);
  });

  it('never waits longer than the cap, nor less than the first delay', () => {
    expect(backoffMs(1_000, 10, 60_000)).toBe(60_000);
    expect(backoffMs(1_000, 0, 60_000)).toBe(1_000);
  });

  it('stays finite after very many failures', () => {
    expect(backoffMs(1_000, 10_000, Number.POSITIVE_INFINITY)).toBe(1_000 * 2 ** 30);
  });
});
