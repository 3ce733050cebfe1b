/**
 * `npm run bench`: every figure of docs/benchmarks.md, each measured in this run against its
 * baseline. Settings come from the environment (BENCH_*), defaults below.
 */
import { it } from 'vitest';
import { ackPath } from './ack-path.js';
import { pollEconomy } from './poll-economy.js';
import { pollerScale } from './poller-scale.js';
import { writeReport } from './report.js';

const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

it('measures docs-agent against its baselines', async () => {
  const settings = {
    latencyMs: setting('BENCH_LATENCY_MS', 0),
    commands: setting('BENCH_COMMANDS', 3_000),
    concurrency: setting('BENCH_CONCURRENCY', 50),
    scaleJobs: setting('BENCH_SCALE_JOBS', 10_000),
    pollBudget: setting('BENCH_POLL_RPS', 400),
    economyJobs: setting('BENCH_ECONOMY_JOBS', 50),
    economyTimeScale: setting('BENCH_TIME_SCALE', 0.01),
  };
  const log = (what: string) => process.stdout.write(`bench: ${what}\n`);
  log('ack path and start latency');
  const ack = await ackPath({
    commands: settings.commands,
    concurrency: settings.concurrency,
    warmup: 300,
    latencyMs: settings.latencyMs,
  });
  log('start-up and poller at scale');
  const scale = await pollerScale({
    jobs: settings.scaleJobs,
    channels: 20,
    budget: settings.pollBudget,
    pollIntervalMs: 10_000,
    finishing: 0.1,
    windowMs: 30_000,
    latencyMs: settings.latencyMs,
  });
  log('poll economy');
  const economy = await pollEconomy({
    jobs: settings.economyJobs,
    longShare: 0.04,
    timeScale: settings.economyTimeScale,
    latencyMs: settings.latencyMs,
  });
  const text = writeReport({ settings, ack, scale, economy }, 'npm run bench');
  process.stdout.write(`\n${text}\nWritten to reports/bench.md and reports/bench.json\n`);
});
