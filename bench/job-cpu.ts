import { waitFor } from '../test/helpers/http.js';
import { type Child, startDocsAgent, startNaiveBot } from './processes.js';
import { round } from './stats.js';
import { type TaggedWorld, taggedWorld } from './tagged-world.js';

export interface JobCpuOptions {
  /** Jobs per run. */
  jobs: number;
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
  ours: CpuRun;
  naive: CpuRun;
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
 * (`bench/naive-bot.mjs`), each on its own stand-ins and started afresh.
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
  const ours = await run(
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
  const naive = await run(
    (world) => startNaiveBot({ ...world.botEnv(), POLL_INTERVAL_MS: interval }),
    'naive',
  );
  return { ours, naive };
}
