import type { BenchResults } from './report.js';
import { median, type Summary } from './stats.js';
import { judge, ms, type Row, s, x } from './verdicts.js';

/** A reported row of per-round ratios: their median and range. */
export const perRound = (measure: string, ratios: number[]): Row => ({
  measure,
  ours: `${x(median(ratios))} (${x(Math.min(...ratios))} to ${x(Math.max(...ratios))})`,
  baseline: '',
  ratio: '',
  target: 'reported',
  met: undefined,
});

/** What each ack baseline is, as the table names it. */
export const BARE = 'bare Bolt as a user writes it';
export const TUNED = 'tuned Bolt (set up as docs-agent sets up its own)';

/** The sustained flood's rows: docs-agent against both baselines, its background work included. */
export function floodRows(r: BenchResults): Row[] {
  const { bare, tuned, ours } = r.flood;
  const rate = `${r.settings.floodRate}/s offered for ${r.settings.floodSeconds} s, ${r.settings.floodRounds} rounds, all warmed with 300 commands`;
  const p99 = ours.latencyMs.p99 / bare.latencyMs.p99;
  const latencies = (l: Summary) => [l.p50, l.p95, l.p99, l.max].map(ms).join(' / ');
  const complete = ours.completed === ours.latencyMs.count && bare.completed === bare.latencyMs.count;
  return [
    {
      measure: `sustained flood: commands fully done per second (${rate})`,
      ours: `${ours.completedPerSecond} (${ours.completed} of ${ours.latencyMs.count} done)`,
      baseline: `${bare.completedPerSecond} bare; ${tuned.completedPerSecond} tuned`,
      ratio: `${x(ours.completedPerSecond / bare.completedPerSecond)} bare, ${x(ours.completedPerSecond / tuned.completedPerSecond)} tuned`,
      target: 'reported',
      met: undefined,
    },
    {
      measure: `sustained flood: ack latency p50 / p95 / p99 / max (${rate})`,
      ours: latencies(ours.latencyMs),
      baseline: `${latencies(bare.latencyMs)} (${BARE}); p99 ${ms(tuned.latencyMs.p99)} (${TUNED})`,
      ratio: `p50 ${x(ours.latencyMs.p50 / bare.latencyMs.p50)}, p99 ${x(p99)} bare; p99 ${x(ours.latencyMs.p99 / tuned.latencyMs.p99)} tuned`,
      target: "max < 3 s (Slack's limit)",
      serves: 'the person typing: Slack shows an error when no answer comes within 3 s',
      met: judge([ours.latencyMs.max], () => ours.latencyMs.max < 3_000 && ours.non200 === 0 && complete),
    },
    perRound(
      "sustained flood: each round's own ack p99 ratio to bare Bolt, median (lowest to highest)",
      r.flood.roundP99Ratios,
    ),
    {
      measure: 'sustained flood: CPU per command until its work is done (background work included)',
      ours: ms(ours.cpuPerCommandMs),
      baseline: `${ms(bare.cpuPerCommandMs)} bare; ${ms(tuned.cpuPerCommandMs)} tuned`,
      ratio: `${x(ours.cpuPerCommandMs / bare.cpuPerCommandMs)} bare, ${x(ours.cpuPerCommandMs / tuned.cpuPerCommandMs)} tuned`,
      target: 'reported',
      met: undefined,
    },
    {
      measure:
        'sustained flood: command to job created p50 / p99; work left when the flood ends (median of rounds)',
      ours: `${ms(r.flood.startLatencyMs.p50)} / ${ms(r.flood.startLatencyMs.p99)}; ${s(ours.drainMs)}`,
      baseline: '',
      ratio: '',
      target: 'reported',
      met: undefined,
    },
    {
      measure: 'sustained flood: non-200 answers',
      ours: String(ours.non200),
      baseline: `${bare.non200} bare; ${tuned.non200} tuned`,
      ratio: '',
      target: '0',
      serves: 'the person typing: an error instead of an answer',
      met: judge([ours.latencyMs.count || Number.NaN], () => ours.non200 === 0),
    },
  ];
}
