import { describe, expect, it } from 'vitest';
import { failureBackoff, pollInterval } from '../../src/poller/poller.js';

const MIN = 60_000;

describe('poll intervals', () => {
  it('stays at the configured interval while a run is young', () => {
    expect(pollInterval(0, 10_000, 10 * MIN, 5 * MIN)).toBe(10_000);
    expect(pollInterval(10 * MIN - 1, 10_000, 10 * MIN, 5 * MIN)).toBe(10_000);
  });

  it('then waits a tenth of the run’s age, up to the cap', () => {
    expect(pollInterval(10 * MIN, 10_000, 10 * MIN, 5 * MIN)).toBe(MIN);
    expect(pollInterval(30 * MIN, 10_000, 10 * MIN, 5 * MIN)).toBe(3 * MIN);
    expect(pollInterval(24 * 60 * MIN, 10_000, 10 * MIN, 5 * MIN)).toBe(5 * MIN);
  });

  it('never polls an old run more often than a young one', () => {
    expect(pollInterval(20 * MIN, 10 * MIN, 10 * MIN, 60 * MIN)).toBe(10 * MIN);
    expect(pollInterval(20 * MIN, 10_000, 0, 5 * MIN)).toBe(2 * MIN);
  });

  it('doubles per consecutive failure, up to the cap', () => {
    expect([1, 2, 3, 4, 5].map((f) => failureBackoff(f, 10_000, 60_000))).toEqual([
      20_000, 40_000, 60_000, 60_000, 60_000,
    ]);
    expect(failureBackoff(1_000, 10_000, 60_000)).toBe(60_000);
  });
});
