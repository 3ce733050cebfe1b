import type { PaceRun, RealisticPaceResult } from './realistic-pace.js';
import { round } from './stats.js';
import { judge, measured, ms, NOT_MEASURED, type Row } from './verdicts.js';

/** `n` milliseconds in round trips, signed: `+0.3 round trips`. */
const trips = (n: number, roundTripMs: number) => {
  const t = round(n / roundTripMs, 2);
  return measured(t) ? `${t >= 0 ? '+' : ''}${t} round trips` : NOT_MEASURED;
};

/** A run's count of commands measured, when some were lost. */
const lostNote = (run: PaceRun) =>
  run.measured === run.sent ? '' : ` (${run.measured} of ${run.sent} measured)`;

/**
 * The realistic pace's rows: docs-agent's command to status card and command to job created
 * upstream against the naive bot's, each target half a round trip over the naive bot's median,
 * and how far each bot's medians are from the limit (the card after no round trip, the job after
 * one: the card's answer).
 */
export function paceRows(pace: RealisticPaceResult): Row[] {
  const { ours, naive, roundTripMs: trip } = pace;
  const load = `realistic pace (a command every ${pace.intervalMs} ms, ${trip} ms per answer)`;
  const complete = ours.measured === ours.sent && ours.non200 === 0 && ours.sent > 0;
  const row = (what: string, k: 'cardMs' | 'jobMs', serves: string): Row => {
    const gap = ours[k].p50 - naive[k].p50;
    return {
      measure: `${load}: command to ${what} p50 / p95`,
      ours: `${ms(ours[k].p50)} / ${ms(ours[k].p95)}${lostNote(ours)}`,
      baseline: `${ms(naive[k].p50)} / ${ms(naive[k].p95)} (naive bot)${lostNote(naive)}`,
      ratio: `p50 ${trips(gap, trip)}`,
      target: "p50 ≤ naive's + half a round trip",
      serves,
      met: judge([ours[k].p50, naive[k].p50, trip], () => gap <= trip / 2 && complete),
    };
  };
  const fromLimit = (run: PaceRun) => `${trips(run.cardMs.p50, trip)} / ${trips(run.jobMs.p50 - trip, trip)}`;
  return [
    row('status card', 'cardMs', 'the person typing: the first thing they see'),
    row('job created upstream', 'jobMs', 'the person who asked: the agent starts on it'),
    {
      measure: `${load}: p50 above the limit (card: no round trip before it; job: one, the card's answer), card / job`,
      ours: fromLimit(ours),
      baseline: `${fromLimit(naive)} (naive bot)`,
      ratio: '',
      target: 'reported',
      met: undefined,
    },
  ];
}
