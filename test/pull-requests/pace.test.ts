import { describe, expect, it } from 'vitest';
import { checkInterval, FOLLOWING, failedCheckInterval, paceOf } from '../../src/pull-requests/pace.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('how often a followed pull request is checked', () => {
  it('every minute in its first hour, then a tenth of its age, half an hour at most', () => {
    expect(checkInterval(0, FOLLOWING)).toBe(MINUTE);
    expect(checkInterval(59 * MINUTE, FOLLOWING)).toBe(MINUTE);
    expect(checkInterval(2 * HOUR, FOLLOWING)).toBe(12 * MINUTE);
    expect(checkInterval(3 * 24 * HOUR, FOLLOWING)).toBe(30 * MINUTE);
  });

  it('backs off through an outage, doubling from a minute up to half an hour', () => {
    expect([1, 2, 3, 4, 5, 6, 20].map((n) => failedCheckInterval(n, FOLLOWING) / MINUTE)).toEqual([
      2, 4, 8, 16, 30, 30, 30,
    ]);
  });

  it('costs a few hundred requests over a pull request’s two weeks, most of them 304s', () => {
    let checks = 0;
    for (let age = 0; age < FOLLOWING.boundMs; age += checkInterval(age, FOLLOWING)) checks += 1;
    expect(checks).toBeLessThan(800);
    expect(FOLLOWING.boundMs).toBe(14 * 24 * HOUR);
  });

  it('GITHUB_CHECK_EVERY_MS sets the first interval and looks as often, never less often than by default', () => {
    expect(paceOf(undefined)).toBe(FOLLOWING);
    expect(paceOf(50)).toEqual({ ...FOLLOWING, firstIntervalMs: 50, lookEveryMs: 50 });
    const slow = paceOf(2 * HOUR);
    expect(slow.lookEveryMs).toBe(FOLLOWING.lookEveryMs);
    expect(slow.maxIntervalMs).toBe(2 * HOUR);
  });
});
