import { waitFor } from '../test/helpers/http.js';
import { type Child, startDocsAgent, startNaiveBot } from './processes.js';
import { round } from './stats.js';
import { type TaggedWorld, taggedWorld } from './tagged-world.js';

export interface JobCpuOptions {
  /** Jobs per run. */
  jobs: number;
  /**
   * Rounds (at least one), each a fresh docs-agent and a fresh naive bot, taking turns at going
   * first: the machine's drift over a run then weighs on both alike.
   */
  rounds: number;
  /** Commands in flight at once. */
  concurrency: number;
  /** Poll interval of both bots, in milliseconds. */
  pollIntervalMs: number;
  latencyMs: number;
}

export interface CpuRun {
  /** CPU time (user + system) of the bot's process per job, in milliseconds. */
  cpuMsPerJob: number;
  /** Jobs whose outcome was posted. */
  completed: number;
  /** Wall time of the run, from the first command to the last outcome post, in milliseconds. */
  wallMs: number;
}

export interface JobCpuResult {
  /** Every round's runs pooled: CPU per job over all the jobs of all the rounds. */
  ours: CpuRun;
  naive: CpuRun;
  /** Each round's own runs, in the order they were made (absent in reports made before rounds). */
  rounds?: { ours: CpuRun; naive: CpuRun }[];
}

/** Runs of several rounds as one: CPU per job over all their jobs, wall time summed. */
export function pooled(runs: CpuRun[], jobsPerRun: number): CpuRun {
  const total = (pick: (run: CpuRun) => number) => runs.reduce((sum, run) => sum + pick(run), 0);
  return {
    cpuMsPerJob: round(total((run) => run.cpuMsPerJob * jobsPerRun) / (jobsPerRun * runs.length), 2),
    completed: total((run) => run.completed),
    wallMs: total((run) => run.wallMs),
  };
}

/** One run: `jobs` commands, each job ending upstream at its first poll, until every outcome is posted. */
async function measure(
  world: TaggedWorld,
  bot: Child,
  label: string,
  options: JobCpuOptions,
): Promise<CpuRun> {
  const cpuBefore = bot.cpuMs();
  const startedAt = performance.now();
  const posts = world.threadPostAt.size;
  await world.load(bot.base, label, options.jobs, options.concurrency);
  await waitFor(
    'every outcome posted',
    () => world.threadPostAt.size - posts >= options.jobs,
    30_000 + options.jobs * 20,
  ).catch(() => undefined);
  return {
    cpuMsPerJob: round((bot.cpuMs() - cpuBefore) / options.jobs, 2),
    completed: world.threadPostAt.size - posts,
    wallMs: round(performance.now() - startedAt, 0),
  };
}

/**
 * CPU per job's whole life (command, acknowledgement, card, create call, polls, outcome post),
 * from the process's own CPU counters, for docs-agent and for the naive bot
 * (`bench/naive-bot.mjs`), each on its own stand-ins and started afresh for every round.
 */
export async function jobCpu(options: JobCpuOptions): Promise<JobCpuResult> {
  const run = async (start: (world: TaggedWorld) => Promise<Child>, label: string) => {
    const world = await taggedWorld({ latencyMs: options.latencyMs, finishAfterGets: 1 });
    let bot: Child | undefined;
    try {
      bot = await start(world);
      return await measure(world, bot, label, options);
    } finally {
      await bot?.stop();
      await world.close();
    }
  };
  const interval = String(options.pollIntervalMs);
  const runOurs = () =>
    run(
      (world) =>
        startDocsAgent(
          world.env({
            POLL_INTERVAL_MS: interval,
            POLL_MAX_INTERVAL_MS: interval,
            POLL_MAX_RPS: '1000',
          }),
        ),
      'cpu',
    );
  const runNaive = () =>
    run((world) => startNaiveBot({ ...world.botEnv(), POLL_INTERVAL_MS: interval }), 'naive');
  const rounds: NonNullable<JobCpuResult['rounds']> = [];
  // In turn ABBA: over four rounds each bot goes first twice, early and late alike.
  for (let i = 0; i < Math.max(1, options.rounds); i++) {
    if (i % 4 === 0 || i % 4 === 3) {
      const ours = await runOurs();
      rounds.push({ ours, naive: await runNaive() });
    } else {
      const naive = await runNaive();
      rounds.push({ ours: await runOurs(), naive });
    }
  }
  return {
    ours: pooled(
      rounds.map((r) => r.ours),
      options.jobs,
    ),
    naive: pooled(
      rounds.map((r) => r.naive),
      options.jobs,
    ),
    rounds,
  };
}
