import { describe, expect, it } from 'vitest';
import { paceRows } from '../../bench/pace-rows.js';
import { readReport } from '../../bench/publish.js';
import type { PaceRun, RealisticPaceResult } from '../../bench/realistic-pace.js';
import { type BenchResults, rows } from '../../bench/report.js';
import { summarize } from '../../bench/stats.js';

/** A bot's run whose every command took `card` and `job` milliseconds. */
const run = (card: number, job: number, fields: Partial<PaceRun> = {}): PaceRun => ({
  sent: 10,
  non200: 0,
  measured: 10,
  ackMs: summarize(Array(10).fill(1)),
  cardMs: summarize(Array(10).fill(card)),
  jobMs: summarize(Array(10).fill(job)),
  ...fields,
});

const pace = (ours: PaceRun, naive = run(3, 104)): RealisticPaceResult => ({
  intervalMs: 300,
  roundTripMs: 100,
  ours,
  naive,
  behindNaive: { card: Number.NaN, job: Number.NaN },
  rounds: [],
});

const verdicts = (result: RealisticPaceResult) => paceRows(result).map((r) => r.met);

describe('the realistic pace rows', () => {
  it('meet their targets within half a round trip of the naive bot, and not beyond', () => {
    expect(verdicts(pace(run(53, 154)))).toEqual(['yes', 'yes', undefined]);
    expect(verdicts(pace(run(54, 154)))).toEqual(['no', 'yes', undefined]);
    expect(verdicts(pace(run(3, 155)))).toEqual(['yes', 'no', undefined]);
  });

  it('name the load and show each median above the naive bot’s and above the limit in round trips', () => {
    const [card, job, limit] = paceRows(pace(run(23, 254)));
    expect(card?.measure).toBe(
      'realistic pace (a command every 300 ms, 100 ms per answer): command to status card p50 / p95',
    );
    expect(card?.ours).toBe('23 ms / 23 ms');
    expect(card?.baseline).toBe('3 ms / 3 ms (naive bot)');
    expect(card?.ratio).toBe('p50 +0.2 round trips');
    expect(job?.ratio).toBe('p50 +1.5 round trips');
    expect(limit?.ours).toBe('+0.23 round trips / +1.54 round trips');
    expect(limit?.baseline).toBe('+0.03 round trips / +0.04 round trips (naive bot)');
  });

  it('do not meet a target when docs-agent lost a command or answered one with an error', () => {
    expect(verdicts(pace(run(3, 104, { measured: 9 })))).toEqual(['no', 'no', undefined]);
    expect(verdicts(pace(run(3, 104, { non200: 1 })))).toEqual(['no', 'no', undefined]);
    expect(paceRows(pace(run(3, 104, { measured: 9 })))[0]?.ours).toContain('(9 of 10 measured)');
  });

  it('are "not measured" when a median is missing', () => {
    const none = run(3, 104, { measured: 0, cardMs: summarize([]), jobMs: summarize([]) });
    expect(verdicts(pace(none))).toEqual(['not measured', 'not measured', undefined]);
    expect(verdicts(pace(run(3, 104), none))).toEqual(['not measured', 'not measured', undefined]);
  });

  it('are in the report only when the part was measured', () => {
    const report: BenchResults = structuredClone(readReport());
    delete report.pace;
    const without = rows(report).filter((r) => r.measure.startsWith('realistic pace')).length;
    const withPace = rows({ ...report, pace: pace(run(3, 104)) }).filter((r) =>
      r.measure.startsWith('realistic pace'),
    ).length;
    expect([without, withPace]).toEqual([0, 3]);
  });
});
