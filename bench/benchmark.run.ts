/**
 * `npm run bench`: every figure of docs/benchmarks.md, each measured in this run against its
 * baseline. Settings come from the environment (BENCH_*), defaults below.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { it } from 'vitest';
import { ackPath } from './ack-path.js';
import { busyWorkspace } from './busy-workspace.js';
import { coldBurst } from './cold-burst.js';
import { flood } from './flood.js';
import { jobCpu } from './job-cpu.js';
import { pollEconomy } from './poll-economy.js';
import { pollerScale } from './poller-scale.js';
import { realisticPace } from './realistic-pace.js';
import { runInfo, writeReport } from './report.js';

const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

it('measures docs-agent against its baselines', async () => {
  // BENCH_ONLY=flood|ack|cold|cpu|scale|economy|busy|pace runs one part and prints it (no report),
  // keeping its raw readings, with the run's settings and machine, in reports/bench-<part>.json.
  const only = process.env.BENCH_ONLY as keyof typeof parts | undefined;
  const run = runInfo(only ? `BENCH_ONLY=${only} npm run bench` : 'npm run bench');
  const settings = {
    latencyMs: setting('BENCH_LATENCY_MS', 0),
    floodRate: setting('BENCH_FLOOD_RATE', 200),
    floodSeconds: setting('BENCH_FLOOD_SECONDS', 5),
    floodRounds: setting('BENCH_FLOOD_ROUNDS', 3),
    commands: setting('BENCH_COMMANDS', 3_000),
    concurrency: setting('BENCH_CONCURRENCY', 50),
    coldCommands: setting('BENCH_COLD_COMMANDS', 100),
    coldRounds: setting('BENCH_COLD_ROUNDS', 10),
    cpuJobs: setting('BENCH_CPU_JOBS', 300),
    cpuRounds: setting('BENCH_CPU_ROUNDS', 8),
    scaleJobs: setting('BENCH_SCALE_JOBS', 10_000),
    pollBudget: setting('BENCH_POLL_RPS', 400),
    economyJobs: setting('BENCH_ECONOMY_JOBS', 50),
    economyTimeScale: setting('BENCH_TIME_SCALE', 0.02),
    busyRate: setting('BENCH_BUSY_RATE', 60),
    busyMinutes: setting('BENCH_BUSY_MINUTES', 5),
    busyLatencyMs: setting('BENCH_BUSY_LATENCY_MS', 100),
    // 0: the limited runs and their unlimited baselines one after the other, not side by side.
    busySideBySide: setting('BENCH_BUSY_SIDE_BY_SIDE', 1),
    paceCommands: setting('BENCH_PACE_COMMANDS', 50),
    paceIntervalMs: setting('BENCH_PACE_INTERVAL_MS', 300),
    paceRounds: setting('BENCH_PACE_ROUNDS', 4),
    paceLatencyMs: setting('BENCH_PACE_LATENCY_MS', 100),
  };
  const parts = {
    flood: () =>
      flood({
        rate: settings.floodRate,
        seconds: settings.floodSeconds,
        rounds: settings.floodRounds,
        connections: 200,
        warmup: 300,
        latencyMs: settings.latencyMs,
      }),
    ack: () =>
      ackPath({
        commands: settings.commands,
        concurrency: settings.concurrency,
        warmup: 300,
        roundSize: 300,
        latencyMs: settings.latencyMs,
      }),
    cold: () =>
      coldBurst({
        commands: settings.coldCommands,
        concurrency: settings.concurrency,
        rounds: settings.coldRounds,
        latencyMs: settings.latencyMs,
      }),
    cpu: () =>
      jobCpu({
        jobs: settings.cpuJobs,
        rounds: settings.cpuRounds,
        concurrency: 10,
        pollIntervalMs: 1_000,
        latencyMs: settings.latencyMs,
      }),
    scale: () =>
      pollerScale({
        jobs: settings.scaleJobs,
        channels: 20,
        budget: settings.pollBudget,
        pollIntervalMs: 10_000,
        finishing: 0.1,
        windowMs: 30_000,
        latencyMs: settings.latencyMs,
      }),
    economy: () =>
      pollEconomy({
        jobs: settings.economyJobs,
        longShare: 0.04,
        timeScale: settings.economyTimeScale,
        latencyMs: settings.latencyMs,
      }),
    busy: () =>
      busyWorkspace({
        perMinute: settings.busyRate,
        minutes: settings.busyMinutes,
        latencyMs: settings.busyLatencyMs,
        graceMs: 180_000,
        sideBySide: settings.busySideBySide !== 0,
      }),
    pace: () =>
      realisticPace({
        commands: settings.paceCommands,
        intervalMs: settings.paceIntervalMs,
        rounds: settings.paceRounds,
        latencyMs: settings.paceLatencyMs,
        warmup: 100,
      }),
  };
  if (only) {
    const result = await parts[only]();
    mkdirSync('reports', { recursive: true });
    writeFileSync(
      `reports/bench-${only}.json`,
      `${JSON.stringify({ run, settings, [only]: result }, null, 2)}\n`,
    );
    process.stdout.write(`${JSON.stringify(result, null, 1)}\n`);
    return;
  }
  const log = (what: string) => process.stdout.write(`bench: ${what}\n`);
  log('sustained flood');
  const sustained = await parts.flood();
  log('short bursts and start latency');
  const ack = await parts.ack();
  log('cold burst');
  const cold = await parts.cold();
  log('CPU per job');
  const cpu = await parts.cpu();
  log('start-up and poller at scale');
  const scale = await parts.scale();
  log('poll economy');
  const economy = await parts.economy();
  log('busy workspace against Slack rate limits');
  const busy = await parts.busy();
  log('realistic pace against the naive bot');
  const pace = await parts.pace();
  const text = writeReport({ run, settings, flood: sustained, ack, cold, cpu, scale, economy, busy, pace });
  process.stdout.write(`\n${text}\nWritten to reports/bench.md and reports/bench.json\n`);
});
