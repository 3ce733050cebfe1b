import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { failureBackoff, pollInterval } from '../../src/poller/poller.js';
import {
  createRunWindows,
  RUN_WINDOW_MIN_RUNS,
  RUN_WINDOW_SAMPLE,
  RUN_WINDOW_TTL_MS,
  runWindow,
} from '../../src/poller/run-window.js';

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

  it('waits until the earliest of them before looking at all, never longer than the cap', () => {
    expect(pollInterval(0, 10_000, 10 * MIN, 5 * MIN, window)).toBe(2 * MIN);
    expect(pollInterval(MIN + 55_000, 10_000, 10 * MIN, 5 * MIN, window)).toBe(8_500);
    expect(pollInterval(0, 10_000, 10 * MIN, 5 * MIN, { fromMs: 60 * MIN, untilMs: 90 * MIN })).toBe(5 * MIN);
  });

  it('looks a little more often than the interval inside it', () => {
    expect(pollInterval(2 * MIN, 10_000, 10 * MIN, 5 * MIN, window)).toBe(8_500);
    expect(pollInterval(8 * MIN - 1, 10_000, 10 * MIN, 5 * MIN, window)).toBe(8_500);
  });

  it('goes back to the plain schedule once the run is older than nearly all of them', () => {
    expect(pollInterval(8 * MIN, 10_000, 10 * MIN, 5 * MIN, window)).toBe(10_000);
    expect(pollInterval(30 * MIN, 10_000, 10 * MIN, 5 * MIN, window)).toBe(3 * MIN);
  });
});

describe('a project’s run window', () => {
  it('is none until the project has finished enough runs', () => {
    expect(runWindow([])).toBeUndefined();
    expect(runWindow(Array.from({ length: RUN_WINDOW_MIN_RUNS - 1 }, () => 3 * MIN))).toBeUndefined();
    expect(runWindow(Array.from({ length: RUN_WINDOW_MIN_RUNS }, () => 3 * MIN))).toEqual({
      fromMs: 162_000,
      untilMs: 216_000,
    });
  });

  it('runs from a little before the shortest to a little after the 95th percentile: an hours-long run does not stretch it', () => {
    // 1..20 minutes, in any order, and one that ran for three hours.
    const lengths = [...Array.from({ length: 20 }, (_, i) => (20 - i) * MIN), 180 * MIN];
    expect(runWindow(lengths)).toEqual({ fromMs: 54_000, untilMs: 24 * MIN });
  });
});

describe('the run windows the poller reads', () => {
  const lengths = Array.from({ length: 10 }, (_, i) => (i + 1) * MIN);
  function windows(read: () => Promise<number[]>) {
    let clock = 0;
    const asked: (string | null)[] = [];
    const warned: string[] = [];
    const logger = createLogger({ level: 'warn', secrets: [], write: (line) => warned.push(line) });
    const store = {
      runLengths: async (projectId: string | null, limit: number) => {
        asked.push(projectId);
        expect(limit).toBe(RUN_WINDOW_SAMPLE);
        return read();
      },
    };
    const of = createRunWindows({ store, logger, now: () => clock });
    const advance = (ms: number) => {
      clock += ms;
    };
    return { of, asked, warned, advance };
  }

  it('reads each project’s runs once while its window is fresh, and again after', async () => {
    const w = windows(async () => lengths);
    const [a, b] = await Promise.all([w.of.of('proj_docs'), w.of.of('proj_docs')]);
    expect(a).toEqual({ fromMs: 54_000, untilMs: 12 * MIN });
    expect(b).toEqual(a);
    expect(await w.of.of(null)).toEqual(a);
    expect(w.asked).toEqual(['proj_docs', null]);
    w.advance(RUN_WINDOW_TTL_MS - 1);
    await w.of.of('proj_docs');
    expect(w.asked).toHaveLength(2);
    w.advance(1);
    await w.of.of('proj_docs');
    expect(w.asked).toEqual(['proj_docs', null, 'proj_docs']);
  });

  it('polls a project whose runs could not be read on the plain schedule, and says so', async () => {
    const w = windows(async () => {
      throw new Error('database is locked');
    });
    await expect(w.of.of('proj_docs')).resolves.toBeUndefined();
    expect(w.warned.join('\n')).toContain('polling on the plain schedule');
    // Not asked again at every poll.
    await w.of.of('proj_docs');
    expect(w.asked).toHaveLength(1);
  });
});
