import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import type { AckPathResult } from './ack-path.js';
import type { ColdBurstResult } from './cold-burst.js';
import type { JobCpuResult } from './job-cpu.js';
import type { PollEconomyResult } from './poll-economy.js';
import type { PollerScaleResult } from './poller-scale.js';
import { median, round, type Summary } from './stats.js';

export interface BenchResults {
  settings: Record<string, number | string>;
  ack: AckPathResult;
  cold: ColdBurstResult;
  cpu: JobCpuResult;
  scale: PollerScaleResult;
  economy: PollEconomyResult;
}

interface Row {
  measure: string;
  ours: string;
  baseline: string;
  ratio: string;
  target: string;
  /** Undefined: reported, with no target. */
  met: boolean | undefined;
}

const ms = (n: number) => `${round(n, 1)} ms`;
const s = (n: number) => `${round(n / 1_000, 1)} s`;

/** A reported row of per-round ratios: their median and range. */
const perRound = (measure: string, ratios: number[]): Row => ({
  measure,
  ours: `${round(median(ratios))}x (${round(Math.min(...ratios))}x to ${round(Math.max(...ratios))}x)`,
  baseline: '',
  ratio: '',
  target: 'reported',
  met: undefined,
});

/** The table of every figure with its baseline, its ratio and its target. */
export function rows(r: BenchResults): Row[] {
  const { ack, cold, cpu, scale, economy } = r;
  const throughputRatio = ack.ours.throughput / ack.bare.throughput;
  const p50Ratio = ack.ours.latencyMs.p50 / ack.bare.latencyMs.p50;
  const p99Ratio = ack.ours.latencyMs.p99 / ack.bare.latencyMs.p99;
  const coldP50Ratio = cold.ours.latencyMs.p50 / cold.bare.latencyMs.p50;
  const coldP99Ratio = cold.ours.latencyMs.p99 / cold.bare.latencyMs.p99;
  const latencies = (l: Summary) => [l.p50, l.p95, l.p99, l.max].map(ms).join(' / ');
  const commands = `${r.settings.commands} commands at ${r.settings.concurrency}`;
  const burst = `cold burst of ${r.settings.coldCommands} at ${r.settings.concurrency}, ${cold.bare.latencyMs.count / Number(r.settings.coldCommands)} rounds pooled`;
  const boundRatio = scale.deliveryMs.p95 / scale.boundMs;
  const getsRatio = economy.naive.getsPerJob / economy.ours.getsPerJob;
  const latencyRatio = economy.ours.latencyMs.p95 / economy.naive.latencyMs.p95;
  const budget = Number(r.settings.pollBudget);
  return [
    {
      measure: `ack throughput (commands/s), ${commands}`,
      ours: String(ack.ours.throughput),
      baseline: `${ack.bare.throughput} (bare Bolt)`,
      ratio: `${round(throughputRatio)}x`,
      target: 'reported',
      met: undefined,
    },
    {
      measure: `CPU per acknowledged command, ${commands}`,
      ours: `${round(ack.cpuPerCommandMs.ours, 2)} ms`,
      baseline: `${round(ack.cpuPerCommandMs.bare, 2)} ms (bare Bolt)`,
      ratio: `${round(ack.cpuPerCommandMs.ours / ack.cpuPerCommandMs.bare)}x`,
      target: 'reported',
      met: undefined,
    },
    {
      measure: `ack latency p50 / p95 / p99 / max, ${commands}`,
      ours: latencies(ack.ours.latencyMs),
      baseline: latencies(ack.bare.latencyMs),
      ratio: `p50 ${round(p50Ratio)}x, p99 ${round(p99Ratio)}x`,
      target: 'p99 ≤ 1.2x',
      met: p99Ratio <= 1.2,
    },
    perRound(`each round's own ack p99 ratio, ${commands}, median (lowest to highest)`, ack.roundP99Ratios),
    {
      measure: `ack latency p50 / p95 / p99 / max, ${burst}`,
      ours: latencies(cold.ours.latencyMs),
      baseline: latencies(cold.bare.latencyMs),
      ratio: `p50 ${round(coldP50Ratio)}x, p99 ${round(coldP99Ratio)}x`,
      target: 'p99 ≤ 1.2x',
      met: coldP99Ratio <= 1.2 && cold.ours.non200 === 0,
    },
    perRound("cold burst: each round's own ack p99 ratio, median (lowest to highest)", cold.roundP99Ratios),
    {
      measure: 'cold burst: CPU per burst, main thread / other threads (median of rounds)',
      ours: `${ms(cold.burstCpuMs.ours.main)} / ${ms(cold.burstCpuMs.ours.others)}`,
      baseline: `${ms(cold.burstCpuMs.bare.main)} / ${ms(cold.burstCpuMs.bare.others)} (bare Bolt)`,
      ratio: `main ${round(cold.burstCpuMs.ours.main / cold.burstCpuMs.bare.main)}x`,
      target: 'reported',
      met: undefined,
    },
    {
      measure: 'cold burst: ack to card posted / to job created, p50 / p99',
      ours: `${ms(cold.ackToCardMs.p50)} / ${ms(cold.ackToCardMs.p99)}; ${ms(cold.ackToJobMs.p50)} / ${ms(cold.ackToJobMs.p99)}`,
      baseline: '',
      ratio: '',
      target: 'p99 ≤ 1.5 s',
      met:
        Math.max(cold.ackToCardMs.p99, cold.ackToJobMs.p99) <= 1_500 &&
        cold.started === cold.ours.latencyMs.count,
    },
    {
      measure: `CPU per job, command to outcome post (${r.settings.cpuJobs} jobs)`,
      ours: `${cpu.ours.cpuMsPerJob} ms (${cpu.ours.completed} done)`,
      baseline: `${cpu.naive.cpuMsPerJob} ms (naive bot, ${cpu.naive.completed} done)`,
      ratio: `${round(cpu.ours.cpuMsPerJob / cpu.naive.cpuMsPerJob)}x`,
      target: 'reported',
      met: undefined,
    },
    {
      measure: 'non-200 answers',
      ours: String(ack.ours.non200),
      baseline: String(ack.bare.non200),
      ratio: '',
      target: '0',
      met: ack.ours.non200 === 0,
    },
    {
      measure: 'start latency p50 / p95 / p99 (stand-in time removed)',
      ours: [ack.startLatencyMs.p50, ack.startLatencyMs.p95, ack.startLatencyMs.p99].map(ms).join(' / '),
      baseline: '',
      ratio: '',
      target: 'p99 < 20 ms',
      met: ack.startLatencyMs.p99 < 20 && ack.started === ack.bare.latencyMs.count,
    },
    {
      measure: `outcome delivery p50 / p95 / max (${scale.expected} of ${r.settings.scaleJobs} jobs end)`,
      ours: [scale.deliveryMs.p50, scale.deliveryMs.p95, scale.deliveryMs.max].map(s).join(' / '),
      baseline: `bound ${s(scale.boundMs)}`,
      ratio: `p95 ${round(boundRatio)}x`,
      target: 'p95 ≤ 1.2x bound',
      met: boundRatio <= 1.2 && scale.delivered === scale.expected,
    },
    {
      measure: 'upstream GETs per second: mean / busiest second',
      ours: `${scale.getsPerSecond} / ${scale.busiestSecond}`,
      baseline: `budget ${budget}`,
      ratio: `${round(scale.busiestSecond / budget)}x`,
      target: 'busiest ≤ budget',
      met: scale.busiestSecond <= budget,
    },
    {
      measure: `peak RSS with ${r.settings.scaleJobs} running jobs`,
      ours: `${round(scale.peakRssBytes / 2 ** 20, 1)} MB`,
      baseline: '',
      ratio: '',
      target: '< 150 MB',
      met: scale.peakRssBytes < 150 * 2 ** 20,
    },
    {
      measure: `start-up to /healthz ready, ${r.settings.scaleJobs} jobs stored`,
      ours: ms(scale.startupMs),
      baseline: '',
      ratio: '',
      target: '< 1 s',
      met: scale.startupMs < 1_000,
    },
    {
      measure: 'GETs per completed job',
      ours: String(economy.ours.getsPerJob),
      baseline: `${economy.naive.getsPerJob} (naive fixed interval)`,
      ratio: `${round(getsRatio)}x fewer`,
      target: '≥ 2x fewer',
      met: getsRatio >= 2,
    },
    {
      measure: 'delivery latency p95, same scripted jobs',
      ours: ms(economy.ours.latencyMs.p95),
      baseline: `${ms(economy.naive.latencyMs.p95)} (naive)`,
      ratio: `${round(latencyRatio)}x`,
      target: '≤ 1.2x',
      met: latencyRatio <= 1.2,
    },
  ];
}

export function markdown(r: BenchResults, command: string): string {
  const table = [
    '| measure | docs-agent | baseline | ratio | target | met |',
    '|---|---:|---:|---:|---|:---:|',
    ...rows(r).map(
      (row) =>
        `| ${row.measure} | ${row.ours} | ${row.baseline} | ${row.ratio} | ${row.target} | ${row.met === undefined ? '' : row.met ? 'yes' : '**no**'} |`,
    ),
  ].join('\n');
  const settings = Object.entries(r.settings)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  return `${table}\n\nMachine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}. Command: \`${command}\`. Settings: ${settings}.\n`;
}

/** Writes `reports/bench.json` and `reports/bench.md`; returns the Markdown. */
export function writeReport(r: BenchResults, command: string): string {
  const dir = resolve('reports');
  mkdirSync(dir, { recursive: true });
  writeFileSync(resolve(dir, 'bench.json'), `${JSON.stringify({ ...r, rows: rows(r) }, null, 2)}\n`);
  const text = markdown(r, command);
  writeFileSync(resolve(dir, 'bench.md'), text);
  return text;
}
