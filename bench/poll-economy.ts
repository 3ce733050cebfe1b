import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { API_KEY, PROJECT_ID } from '../test/helpers/agent-stand-in.js';
import { testEnv } from '../test/helpers/harness.js';
import { waitFor } from '../test/helpers/http.js';
import { BOT_TOKEN } from '../test/helpers/slack-stand-in.js';
import { startDocsAgent } from './processes.js';
import { seededWorld, seedFinishedRuns } from './seed.js';
import { preciseNow, round, type Summary, summarize } from './stats.js';

const run = promisify(execFile);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export interface PollEconomyOptions {
  jobs: number;
  /** Share of jobs that run for hours rather than minutes. */
  longShare: number;
  /** Real milliseconds per simulated millisecond: 0.01 runs ten seconds of polling in 100 ms. */
  timeScale: number;
  latencyMs: number;
}

export interface PollerRun {
  getsPerJob: number;
  /** From the job's end upstream until its outcome was posted in its thread. */
  latencyMs: Summary;
  completed: number;
}

export interface PollEconomyResult {
  /** docs-agent, its store holding the project's earlier runs (another draw of the same mix). */
  ours: PollerRun;
  /** docs-agent on a project it has no finished runs of: its plain schedule. */
  oursFirstRuns?: PollerRun;
  naive: PollerRun;
  /** Simulated durations of the scripted jobs, for the record: [p50, p95, max] in minutes. */
  durationsMin: number[];
}

/**
 * A scripted mix of run lengths: most finish in minutes (log-normal around three minutes), a few
 * go on for hours (a large rewrite, or a run nobody archives). Deterministic for a given count.
 */
export function scriptedDurations(jobs: number, longShare: number, seedFrom = 42): number[] {
  let seed = seedFrom;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const long = Math.round(jobs * longShare);
  return Array.from({ length: jobs }, (_, i) => {
    if (i < long) return 2 * HOUR + random() * HOUR;
    // Box-Muller for a normal deviate; median 3 minutes, clipped to 1..9 minutes.
    const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    return Math.min(9 * MINUTE, Math.max(MINUTE, 3 * MINUTE * Math.exp(0.5 * normal)));
  });
}

/** A world of stand-ins with `durations.length` running jobs that end on their script. */
async function scriptedWorld(durations: number[], options: PollEconomyOptions, intervalMs: number) {
  const world = await seededWorld({
    latencyMs: options.latencyMs,
    count: durations.length,
    channels: 5,
    pollIntervalMs: intervalMs,
    runAge: () => 0,
    // Jobs start at different moments in a real team, so their polls do not fall together.
    firstPollIn: () => Math.random() * intervalMs,
  });
  const endedAt = new Map<string, number>();
  const start = () => {
    // The runs start now, with the script, not when they were put in the store before the app
    // started: a run's age is what the poller schedules by (the app reads it at every poll).
    const db = new Database(world.path);
    try {
      db.pragma('busy_timeout = 5000');
      db.prepare("UPDATE jobs SET run_started_at = ? WHERE phase = 'active'").run(Date.now());
    } finally {
      db.close();
    }
    world.jobs.forEach((job, i) => {
      setTimeout(
        () => {
          world.agent.complete(job.agentJobId, `https://github.com/example/docs/pull/${i}`);
          endedAt.set(job.agentJobId, preciseNow());
        },
        (durations[i] as number) * options.timeScale,
      );
    });
  };
  return { ...world, endedAt, start, gets: () => world.getAt.length };
}

/**
 * docs-agent over the scripted jobs, with its default poll settings scaled in time and a budget
 * that does not bind; its store holds the project's earlier runs of `history` lengths.
 */
async function oursOver(
  durations: number[],
  options: PollEconomyOptions,
  history: number[],
): Promise<PollerRun> {
  const scaled = (ms: number) => String(Math.round(ms * options.timeScale));
  const intervalMs = 10_000 * options.timeScale;
  const longest = Math.max(...durations) * options.timeScale;
  const ours = await scriptedWorld(durations, options, intervalMs);
  // Run lengths are kept in real milliseconds, as the app under scaled settings sees them.
  await seedFinishedRuns(
    ours.path,
    history.map((ms) => ms * options.timeScale),
  );
  const app = await startDocsAgent(
    testEnv(ours.slack, ours.agent, ours.path, {
      LOG_LEVEL: 'info',
      POLL_INTERVAL_MS: scaled(10_000),
      POLL_BACKOFF_AFTER_MS: scaled(10 * MINUTE),
      POLL_MAX_INTERVAL_MS: scaled(5 * MINUTE),
      POLL_MAX_AGE_MS: String(Math.max(1_000, Math.round(24 * HOUR * options.timeScale))),
      POLL_MAX_RPS: '5000',
    }),
  );
  try {
    const from = ours.gets();
    ours.start();
    await waitFor(
      'every outcome posted',
      () => ours.jobs.every((j) => ours.outcomeAt.has(j.threadTs)),
      longest + 60_000,
    );
    const latencies = ours.jobs.map(
      (j) => (ours.outcomeAt.get(j.threadTs) as number) - (ours.endedAt.get(j.agentJobId) as number),
    );
    return {
      getsPerJob: round((ours.gets() - from) / ours.jobs.length, 1),
      latencyMs: summarize(latencies.map((l) => round(l, 1))),
      completed: latencies.length,
    };
  } finally {
    await app.stop();
    await ours.close();
  }
}

/**
 * GETs per completed job and delivery latency, for docs-agent's poller and for a naive
 * fixed-interval poller, over the same scripted jobs, in scaled time.
 */
export async function pollEconomy(options: PollEconomyOptions): Promise<PollEconomyResult> {
  const durations = scriptedDurations(options.jobs, options.longShare);
  const intervalMs = 10_000 * options.timeScale;

  const ours = await oursOver(durations, options, scriptedDurations(options.jobs, options.longShare, 7));
  const oursFirstRuns = await oursOver(durations, options, []);

  // The naive poller over the same script.
  const naive = await scriptedWorld(durations, options, intervalMs);
  let naiveRun: PollerRun;
  try {
    naive.start();
    await run(process.execPath, [
      resolve('bench/naive-poller.mjs'),
      JSON.stringify({
        baseUrl: naive.agent.url,
        apiKey: API_KEY,
        projectId: PROJECT_ID,
        jobs: naive.jobs.map((j) => ({ id: j.agentJobId, channel: j.channel, threadTs: j.threadTs })),
        intervalMs,
        slackApiUrl: naive.slack.apiUrl,
        botToken: BOT_TOKEN,
      }),
    ]);
    const latencies = naive.jobs.map(
      (j) => (naive.outcomeAt.get(j.threadTs) as number) - (naive.endedAt.get(j.agentJobId) as number),
    );
    naiveRun = {
      getsPerJob: round(naive.gets() / naive.jobs.length, 1),
      latencyMs: summarize(latencies.map((l) => round(l, 1))),
      completed: latencies.length,
    };
  } finally {
    await naive.close();
  }

  const minutes = [...durations].sort((a, b) => a - b).map((d) => round(d / MINUTE, 1));
  return {
    ours,
    oursFirstRuns,
    naive: naiveRun,
    durationsMin: [
      minutes[Math.floor(minutes.length / 2)] as number,
      minutes[Math.ceil(minutes.length * 0.95) - 1] as number,
      minutes.at(-1) as number,
    ],
  };
}
