import { describe, expect, it } from 'vitest';
import { type BusyRun, mismatches, type ThreadState } from '../../bench/busy-readings.js';
import { busyRows } from '../../bench/busy-rows.js';
import { runLengthMs } from '../../bench/busy-world.js';
import { statusCard, statusReaction } from '../../src/blocks/status-card.js';
import { sessionStatusOf } from '../../src/delivery/sessions.js';
import { jobRecord } from '../helpers/job-record.js';
import { HINTS } from '../helpers/rendering.js';

const NOW = 1_700_000_100_000;
const done = jobRecord({
  phase: 'idle',
  lastOutcome: 'completed_pr',
  prLink: 'https://github.com/example/docs/pull/7',
  runCount: 2,
});

/** The thread of a command's `job` as docs-agent renders it, with what the test changes. */
const thread = (job = done, fields: Partial<ThreadState> = {}): ThreadState => ({
  card: statusCard(job, NOW, HINTS),
  rootEmoji: [statusReaction(job)].filter((emoji) => emoji !== null),
  session: sessionStatusOf(job) ?? undefined,
  runs: 2,
  followUpEmoji: ['eyes'],
  ...fields,
});

describe('the final state of a finished job’s thread', () => {
  it('is what docs-agent renders for a job whose last run opened a pull request', () => {
    // The card is the thread's root and shows the state itself: no emoji on it.
    expect(thread().rootEmoji).toEqual([]);
    expect(thread().session).toBe('active');
    expect(mismatches(thread())).toEqual([]);
  });

  it('is not a card, emoji or session still showing the job at work, nor an emoji on the card', () => {
    const working = jobRecord({ phase: 'active', runCount: 2 });
    expect(mismatches(thread(working))).toEqual(['card', 'session']);
    // An emoji on the card, as earlier code put there, is one still to be taken off.
    expect(mismatches(thread(working, { rootEmoji: ['hourglass_flowing_sand'] }))).toEqual([
      'card',
      'root emoji',
      'session',
    ]);
    const twoEmoji = thread(done, { rootEmoji: ['hourglass_flowing_sand', 'white_check_mark'] });
    expect(mismatches(twoEmoji)).toEqual(['root emoji']);
    expect(mismatches(thread(done, { rootEmoji: ['white_check_mark'] }))).toEqual(['root emoji']);
  });

  it('is not a card showing fewer runs than the agent had, nor a follow-up without :eyes:', () => {
    const oneRun = thread(jobRecord({ ...done, runCount: 1 }));
    expect(mismatches(oneRun)).toEqual(['card']);
    expect(mismatches(thread(done, { followUpEmoji: [] }))).toEqual(['follow-up emoji']);
    expect(mismatches(thread(done, { card: undefined, followUpEmoji: undefined }))).toEqual(['card']);
  });
});

describe('the busy workspace’s script and rows', () => {
  it('gives every run 30 to 90 s, the same in every world', () => {
    const lengths = Array.from({ length: 300 }, (_, k) => runLengthMs(k, 1 + (k % 2)));
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(30_000);
    expect(Math.max(...lengths)).toBeLessThan(90_000);
    expect(Math.max(...lengths) - Math.min(...lengths)).toBeGreaterThan(50_000);
    expect(runLengthMs(12, 2)).toBe(runLengthMs(12, 2));
  });

  it('says "not measured", never met, for targets of runs that did not happen', () => {
    const run = (limited: boolean, p95: number): BusyRun =>
      ({
        instances: 1,
        limited,
        commands: 10,
        followUps: 5,
        finished: 10,
        runs: 15,
        refused: {},
        duringRetryAfter: {},
        callsPerRun: { 'chat.postMessage': 1 },
        commandToCardMs: { count: 10, p50: 100, p95, p99: p95, max: p95 },
        endToOutcomeMs: { count: 10, p50: 1_000, p95: 1_000, p99: 1_000, max: 1_000 },
        endToCardMs: { count: 0, p50: Number.NaN, p95: Number.NaN, p99: Number.NaN, max: Number.NaN },
        endToEmojiMs: { count: 0, p50: Number.NaN, p95: Number.NaN, p99: Number.NaN, max: Number.NaN },
        endToSessionMs: { count: 0, p50: Number.NaN, p95: Number.NaN, p99: Number.NaN, max: Number.NaN },
        mismatched: 0,
        doubled: 0,
        lost: { commandsWithoutJob: 0, followUpsNotRun: 0, jobsWithoutOutcome: 0 },
        mismatchedBy: {},
        offRootEmoji: {},
      }) as unknown as BusyRun;
    const rows = busyRows(
      {
        limits: {},
        one: { limited: run(true, 300), unlimited: run(false, 200), sideBySide: true },
        two: undefined,
      },
      { busyRate: 60, busyMinutes: 5 },
    );
    const verdicts = rows.filter((r) => r.met !== undefined).map((r) => [r.measure.split(': ')[1], r.met]);
    expect(verdicts.slice(0, 5)).toEqual([
      ['lost', 'yes'],
      ["agent's end to outcome post p50 / p95", 'yes'],
      ['command to status card p50 / p95', 'no'],
      ['429s on chat.postMessage (what a person waits for)', 'yes'],
      ['calls made during a Retry-After, by method', 'yes'],
    ]);
    expect(verdicts.slice(5).map(([, met]) => met)).toEqual(Array(5).fill('not measured'));
  });
});
