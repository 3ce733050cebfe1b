import { describe, expect, it } from 'vitest';
import { failureBackoff, POLL_STEADY_MS, pollInterval } from '../../src/poller/poller.js';

describe('poll intervals', () => {
  it('stays at the configured interval while a run is young', () => {
    expect(pollInterval(0, 10_000, 60_000)).toBe(10_000);
    expect(pollInterval(POLL_STEADY_MS, 10_000, 60_000)).toBe(10_000);
  });

  it('grows with the age of a long run, up to the cap', () => {
    expect(pollInterval(2 * POLL_STEADY_MS, 10_000, 60_000)).toBe(20_000);
    expect(pollInterval(4 * POLL_STEADY_MS, 10_000, 60_000)).toBe(40_000);
    expect(pollInterval(100 * POLL_STEADY_MS, 10_000, 60_000)).toBe(60_000);
  });

  it('doubles per consecutive failure, up to the cap', () => {
    expect([1, 2, 3, 4, 5].map((f) => failureBackoff(f, 10_000, 60_000))).toEqual([
      20_000, 40_000, 60_000, 60_000, 60_000,
    ]);
    expect(failureBackoff(1_000, 10_000, 60_000)).toBe(60_000);
  });
});
