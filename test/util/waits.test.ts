import { afterEach, describe, expect, it, vi } from 'vitest';
import { backoffMs, withTimeout } from '../../src/util/waits.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('withTimeout', () => {
  it('gives the answer that comes in time', async () => {
    await expect(withTimeout(Promise.resolve('ok'), 1_000)).resolves.toBe('ok');
  });

  it('gives undefined once the time is up', async () => {
    vi.useFakeTimers();
    const answer = withTimeout(new Promise<string>(() => {}), 1_500);
    await vi.advanceTimersByTimeAsync(1_500);
    await expect(answer).resolves.toBeUndefined();
  });

  it('passes a failure that comes in time on, and leaves no timer behind', async () => {
    vi.useFakeTimers();
    await expect(withTimeout(Promise.reject(new Error('refused')), 1_000)).rejects.toThrow('refused');
    expect(vi.getTimerCount()).toBe(0);
  });
});

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
