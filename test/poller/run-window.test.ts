import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import {
  createRunWindows,
  RUN_WINDOW_MIN_RUNS,
  RUN_WINDOW_SAMPLE,
  RUN_WINDOW_TTL_MS,
  runWindow,
} from '../../src/poller/run-window.js';

const MIN = 60_000;

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
