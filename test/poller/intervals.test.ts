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

describe('poll intervals where a project’s runs usually end', () => {
  const window = { fromMs: 2 * MIN, untilMs: 8 * MIN };

  it('waits until the earliest of them before looking at all, at most six intervals', () => {
    expect(pollInterval(0, 10_000, 10 * MIN, 5 * MIN, { fromMs: 50_000, untilMs: 8 * MIN })).toBe(50_000);
    expect(pollInterval(0, 10_000, 10 * MIN, 5 * MIN, window)).toBe(MIN);
    expect(pollInterval(MIN + 55_000, 10_000, 10 * MIN, 5 * MIN, window)).toBe(8_500);
    // Never past the cap either.
    expect(pollInterval(0, 10_000, 10 * MIN, 30_000, window)).toBe(30_000);
  });

  it('looks a little more often than the interval inside it', () => {
    expect(pollInterval(2 * MIN, 10_000, 10 * MIN, 5 * MIN, window)).toBe(8_500);
    expect(pollInterval(8 * MIN - 1, 10_000, 10 * MIN, 5 * MIN, window)).toBe(8_500);
  });

  it('goes back to the plain schedule once the run is older than nearly all of them', () => {
    expect(pollInterval(8 * MIN, 10_000, 10 * MIN, 5 * MIN, window)).toBe(10_000);
    expect(pollInterval(30 * MIN, 10_000, 10 * MIN, 5 * MIN, window)).toBe(3 * MIN);
  });

  it('is never denser than before once a run is old enough to back off, however long the project’s runs take', () => {
    const long = { fromMs: MIN, untilMs: 3 * 60 * MIN };
    expect(pollInterval(10 * MIN - 1, 10_000, 10 * MIN, 5 * MIN, long)).toBe(8_500);
    expect(pollInterval(20 * MIN, 10_000, 10 * MIN, 5 * MIN, long)).toBe(2 * MIN);
  });
});
