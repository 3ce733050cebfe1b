import { afterEach, describe, expect, it, vi } from 'vitest';
import { withTimeout } from '../../src/util/timeout.js';

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
