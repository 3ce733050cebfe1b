import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import type { AckPathResult } from './ack-path.js';
import { busyRows } from './busy-rows.js';
import type { BusyWorkspaceResult } from './busy-workspace.js';
import type { ColdBurstResult } from './cold-burst.js';
import type { FloodResult } from './flood.js';
import { BARE, floodRows, perRound } from './flood-rows.js';
import type { JobCpuResult } from './job-cpu.js';
import { paceRows } from './pace-rows.js';
import type { PollEconomyResult } from './poll-economy.js';
import { pollRows } from './poll-rows.js';
import type { PollerScaleResult } from './poller-scale.js';
import type { RealisticPaceResult } from './realistic-pace.js';
import { round, type Summary } from './stats.js';
import { judge, ms, type Row, type Verdict, x } from './verdicts.js';

/** Where and how a run was made, taken when it started. */
export interface RunInfo {
  command: string;
  commit: string;
  startedAt: string;
  cores: number;
  cpu: string;
  node: string;
  /** The 1, 5 and 15 minute load averages when the run started: others' work on the machine. */
  loadAverageAtStart: number[];
}

/** Notes where, how and on what the run is made; call it before measuring anything. */
export function runInfo(command: string): RunInfo {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    // Not a checkout: the report says so.
  }
  return {
    command,
    commit,
    startedAt: new Date().toISOString(),
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown CPU',
    node: process.version,
    loadAverageAtStart: loadavg().map((n) => round(n)),
  };
}

export interface BenchResults {
  run: RunInfo;
  settings: Record<string, number | string>;
  flood: FloodResult;
  ack: AckPathResult;
  cold: ColdBurstResult;
  cpu: JobCpuResult;
  scale: PollerScaleResult;
  economy: PollEconomyResult;
  /** The busy workspace against Slack's rate limits; absent from reports made before it was measured. */
  busy?: BusyWorkspaceResult;
  /** Commands at a realistic pace against the naive bot; absent from reports made before it was measured. */
  pace?: RealisticPaceResult;
  /**
   * Parts measured in a run of their own (`BENCH_ONLY=<part>`) and published into this report
   * (`BENCH_PART`), each with where and how that run was made; every ratio of a part is still
   * between figures of one run.
   */
  partRuns?: Partial<Record<PartName, RunInfo>>;
}

/** The parts that may be measured in a run of their own and published into a full run's report. */
export type PartName = 'busy' | 'pace' | 'economy' | 'cpu';

export { judge, type Row, type Verdict } from './verdicts.js';

/** How the CPU part was run: jobs per process, and each round's own ratio when it had rounds. */
function cpuRuns(r: BenchResults): string {
  const rounds = r.cpu.rounds ?? [];
  const each = rounds.map((round) => x(round.ours.cpuMsPerJob / round.naive.cpuMsPerJob)).join(', ');
  return rounds.length > 1
    ? `${r.settings.cpuJobs} jobs from a fresh process, ${rounds.length} rounds pooled, taking turns; each round ${each}`
    : `${r.settings.cpuJobs} jobs`;
}

/** The table of every figure with its baseline, its ratio and its target. */
export function rows(r: BenchResults): Row[] {
  const { ack, cold, cpu } = r;
  const throughputRatio = ack.ours.throughput / ack.bare.throughput;
  const p50Ratio = ack.ours.latencyMs.p50 / ack.bare.latencyMs.p50;
  const p99Ratio = ack.ours.latencyMs.p99 / ack.bare.latencyMs.p99;
  const coldP50Ratio = cold.ours.latencyMs.p50 / cold.bare.latencyMs.p50;
  const coldP99Ratio = cold.ours.latencyMs.p99 / cold.bare.latencyMs.p99;
  const latencies = (l: Summary) => [l.p50, l.p95, l.p99, l.max].map(ms).join(' / ');
  const bursts = `short bursts: ${r.settings.commands} commands in bursts of 300 at ${r.settings.concurrency}, background work between bursts, not measured`;
  const burst = `cold burst of ${r.settings.coldCommands} at ${r.settings.concurrency}, ${cold.bare.latencyMs.count / Number(r.settings.coldCommands)} rounds pooled, both warmed alike`;
  const cpuRatio = cpu.ours.cpuMsPerJob / cpu.naive.cpuMsPerJob;
  /** Why the cold burst's figures are reported, not targeted. */
  const noColdBurst = 'nobody yet: no team sends 100 commands in the first second after a start';
  return [
    ...floodRows(r),
    {
      measure: `${bursts}: ack throughput (commands/s)`,
      ours: String(ack.ours.throughput),
      baseline: `${ack.bare.throughput} (${BARE})`,
      ratio: x(throughputRatio),
      target: 'reported',
      met: undefined,
    },
    {
      measure: `${bursts}: CPU per acknowledged command`,
      ours: ms(ack.cpuPerCommandMs.ours),
      baseline: `${ms(ack.cpuPerCommandMs.bare)} (${BARE})`,
      ratio: x(ack.cpuPerCommandMs.ours / ack.cpuPerCommandMs.bare),
      target: 'reported',
      met: undefined,
    },
    {
      measure: `${bursts}: ack latency p50 / p95 / p99 / max`,
      ours: latencies(ack.ours.latencyMs),
      baseline: latencies(ack.bare.latencyMs),
      ratio: `p50 ${x(p50Ratio)}, p99 ${x(p99Ratio)}`,
      target: 'reported',
      met: undefined,
    },
    perRound(`${bursts}: each round's own ack p99 ratio, median (lowest to highest)`, ack.roundP99Ratios),
    {
      measure: `ack latency p50 / p95 / p99 / max, ${burst}`,
      ours: latencies(cold.ours.latencyMs),
      baseline: `${latencies(cold.bare.latencyMs)} (${BARE})`,
      ratio: `p50 ${x(coldP50Ratio)}, p99 ${x(coldP99Ratio)}`,
      target: 'reported',
      serves: noColdBurst,
      met: undefined,
    },
    perRound("cold burst: each round's own ack p99 ratio, median (lowest to highest)", cold.roundP99Ratios),
    {
      measure: 'cold burst: CPU per burst, main thread / other threads (median of rounds)',
      ours: `${ms(cold.burstCpuMs.ours.main)} / ${ms(cold.burstCpuMs.ours.others)}`,
      baseline: `${ms(cold.burstCpuMs.bare.main)} / ${ms(cold.burstCpuMs.bare.others)} (${BARE})`,
      ratio: `main ${x(cold.burstCpuMs.ours.main / cold.burstCpuMs.bare.main)}`,
      target: 'reported',
      met: undefined,
    },
    {
      measure: 'cold burst: ack to card posted / to job created, p50 / p99',
      ours: `${ms(cold.ackToCardMs.p50)} / ${ms(cold.ackToCardMs.p99)}; ${ms(cold.ackToJobMs.p50)} / ${ms(cold.ackToJobMs.p99)}`,
      baseline: '',
      ratio: '',
      target: 'reported',
      serves: noColdBurst,
      met: undefined,
    },
    {
      measure: `CPU per job, command to outcome post (${cpuRuns(r)})`,
      ours: `${ms(cpu.ours.cpuMsPerJob)} (${cpu.ours.completed} done)`,
      baseline: `${ms(cpu.naive.cpuMsPerJob)} (naive bot, ${cpu.naive.completed} done)`,
      ratio: x(cpuRatio),
      target: '≤ 1.5x',
      serves: 'the operator: what a job costs to run',
      met: judge([cpuRatio], () => cpuRatio <= 1.5 && cpu.ours.completed === cpu.naive.completed),
    },
    {
      measure: `${bursts}: non-200 answers`,
      ours: String(ack.ours.non200),
      baseline: String(ack.bare.non200),
      ratio: '',
      target: '0',
      serves: 'the person typing: an error instead of an answer',
      met: judge([ack.ours.latencyMs.count || Number.NaN], () => ack.ours.non200 === 0),
    },
    {
      measure: `${bursts}: start latency p50 / p95 / p99 (stand-in time removed)`,
      ours: [ack.startLatencyMs.p50, ack.startLatencyMs.p95, ack.startLatencyMs.p99].map(ms).join(' / '),
      baseline: '',
      ratio: '',
      target: 'reported',
      serves: 'nobody yet: 300 commands in 150 ms; the realistic pace measures what a person waits for',
      met: undefined,
    },
    ...pollRows(r),
    ...(r.busy ? busyRows(r.busy, r.settings) : []),
    ...(r.pace ? paceRows(r.pace) : []),
  ];
}

const verdict = (met: Verdict | undefined) =>
  met === undefined ? '' : met === 'yes' ? 'yes' : met === 'no' ? '**no**' : '**not measured**';

/** The run's full table, and where, how and on what it was made. */
export function markdown(r: BenchResults): string {
  const table = [
    '| measure | docs-agent | baseline | ratio | target | for whom | met |',
    '|---|---:|---:|---:|---|---|:---:|',
    ...rows(r).map(
      (row) =>
        `| ${row.measure} | ${row.ours} | ${row.baseline} | ${row.ratio} | ${row.target} | ${row.serves ?? ''} | ${verdict(row.met)} |`,
    ),
  ].join('\n');
  const settings = Object.entries(r.settings)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  const { run } = r;
  const parts = Object.entries(r.partRuns ?? {}).map(
    ([part, p]) =>
      `\n\nThe \`${part}\` part was measured in a run of its own: commit ${p.commit}, started ${p.startedAt}, load average ${p.loadAverageAtStart.join(' / ')} at its start. Command: \`${p.command}\`.`,
  );
  return `${table}\n\nMachine: ${run.cores} cores (${run.cpu}), Node ${run.node}, load average ${run.loadAverageAtStart.join(' / ')} at the start (1 / 5 / 15 min). Commit ${run.commit}, started ${run.startedAt}. Command: \`${run.command}\`. Settings: ${settings}.${parts.join('')}\n`;
}

/** Whether a target is read as a ratio to the baseline (or is only reported), rather than as a value. */
const byRatio = (target: string) => /\dx|round trip|budget|reported/.test(target);

/**
 * The README's summary: each figure with a target, as a ratio to its baseline in the same run, or
 * as the value its target is read against (Slack's 3 s, a count, megabytes, the poll bound).
 */
export function summary(r: BenchResults): string {
  const lines = rows(r)
    .filter((row) => row.met !== undefined || row.measure.startsWith('sustained flood'))
    .map(
      (row) =>
        `| ${row.measure} | ${byRatio(row.target) ? row.ratio || row.ours : row.ours} | ${row.target} | ${row.serves ?? ''} | ${verdict(row.met)} |`,
    );
  return [
    '| measure | docs-agent (ratio to the baseline in the same run, or value) | target | for whom | met |',
    '|---|---:|---|---|:---:|',
    ...lines,
  ].join('\n');
}

/** Writes `reports/bench.json` (the raw report) and `reports/bench.md`; returns the Markdown. */
export function writeReport(r: BenchResults): string {
  const dir = resolve('reports');
  mkdirSync(dir, { recursive: true });
  writeFileSync(resolve(dir, 'bench.json'), `${JSON.stringify(r, null, 2)}\n`);
  const text = markdown(r);
  writeFileSync(resolve(dir, 'bench.md'), text);
  return text;
}
