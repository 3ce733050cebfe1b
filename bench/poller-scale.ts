import { createServer } from 'node:net';
import { testEnv } from '../test/helpers/harness.js';
import { sleep, waitFor } from '../test/helpers/http.js';
import { startDocsAgent } from './processes.js';
import { seededWorld } from './seed.js';
import { busiestWindow, preciseNow, round, type Summary, summarize } from './stats.js';

export interface PollerScaleOptions {
  jobs: number;
  channels: number;
  /** POLL_MAX_RPS for the run. */
  budget: number;
  pollIntervalMs: number;
  /** Share of the jobs that turn terminal during the run. */
  finishing: number;
  /** The terminal moments are spread over this long, in milliseconds, after a settling time. */
  windowMs: number;
  latencyMs: number;
}

export interface PollerScaleResult {
  startupMs: number;
  /** max(poll interval, jobs / budget): no poller under this budget can do better. */
  boundMs: number;
  deliveryMs: Summary;
  delivered: number;
  expected: number;
  getsPerSecond: number;
  busiestSecond: number;
  peakRssBytes: number;
}

/** A free TCP port on loopback, so start-up can be timed to the first `/healthz` answer. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/**
 * Start-up with a full store, then the poller at scale: `jobs` active jobs under a GET budget,
 * a share of them turning terminal at random moments; how long until each outcome is in its
 * thread, how many GETs per second went out, and the app's peak memory.
 */
export async function pollerScale(options: PollerScaleOptions): Promise<PollerScaleResult> {
  const { slack, agent, path, jobs, outcomeAt, getAt, close } = await seededWorld({
    latencyMs: options.latencyMs,
    count: options.jobs,
    channels: options.channels,
    pollIntervalMs: options.pollIntervalMs,
    // Young runs (minutes old), first polls spread over one interval, as after a restart.
    runAge: () => Math.random() * 5 * 60_000,
    firstPollIn: () => Math.random() * options.pollIntervalMs,
  });
  const port = await freePort();
  const env = testEnv(slack, agent, path, {
    PORT: String(port),
    LOG_LEVEL: 'info',
    POLL_INTERVAL_MS: String(options.pollIntervalMs),
    POLL_MAX_RPS: String(options.budget),
    DOCS_AGENT_API_TIMEOUT_MS: '6000',
  });
  const spawnedAt = preciseNow();
  const appPromise = startDocsAgent(env);
  await waitFor(
    '/healthz ready',
    async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.status === 200,
    20_000,
  );
  const startupMs = preciseNow() - spawnedAt;
  const app = await appPromise;
  try {
    const boundMs = Math.max(options.pollIntervalMs, (options.jobs / options.budget) * 1_000);
    const measureFrom = preciseNow();
    // A random share turns terminal at random moments, after the poller has settled in.
    const finishing = [...jobs]
      .sort(() => Math.random() - 0.5)
      .slice(0, Math.round(options.jobs * options.finishing));
    const terminalAt = new Map<string, number>();
    const settleMs = 5_000;
    for (const job of finishing) {
      const at = settleMs + Math.random() * options.windowMs;
      setTimeout(() => {
        agent.complete(
          job.agentJobId,
          `https://github.com/example/docs/pull/${job.agentJobId.replace(/\D/g, '')}`,
        );
        terminalAt.set(job.threadTs, preciseNow());
      }, at);
    }
    await sleep(settleMs + options.windowMs);
    await waitFor(
      'every outcome delivered',
      () => finishing.every((j) => outcomeAt.has(j.threadTs)),
      boundMs * 2 + 30_000,
    ).catch(() => undefined);
    const measureTo = preciseNow();
    const latencies = finishing
      .filter((j) => outcomeAt.has(j.threadTs) && terminalAt.has(j.threadTs))
      .map((j) => (outcomeAt.get(j.threadTs) as number) - (terminalAt.get(j.threadTs) as number));
    const gets = getAt.filter((t) => t >= measureFrom && t <= measureTo);
    return {
      startupMs: round(startupMs, 1),
      boundMs,
      deliveryMs: summarize(latencies.map((l) => round(l, 1))),
      delivered: latencies.length,
      expected: finishing.length,
      getsPerSecond: round(gets.length / ((measureTo - measureFrom) / 1_000), 1),
      busiestSecond: busiestWindow(gets, 1_000),
      peakRssBytes: app.peakRss(),
    };
  } finally {
    await app.stop();
    await close();
  }
}
