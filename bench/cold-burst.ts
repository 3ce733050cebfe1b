import { WARM_UP_LANES, WARM_UP_REQUESTS } from '../src/warm-start.js';
import { waitFor } from '../test/helpers/http.js';
import { type AckRun, ackRun, pooled, roundP99Ratios } from './ack-path.js';
import type { Child, LoadResult, ThreadCpu } from './processes.js';
import { startBareBolt, startDocsAgent } from './processes.js';
import { median, round, type Summary, summarize } from './stats.js';
import { taggedWorld } from './tagged-world.js';

export interface ColdBurstOptions {
  /** Commands per burst. */
  commands: number;
  concurrency: number;
  /** Bursts, each against freshly started processes; their figures are pooled. */
  rounds: number;
  latencyMs: number;
}

export interface ColdBurstResult {
  bare: AckRun;
  ours: AckRun;
  /** From each acknowledgement until its status card reached Slack. */
  ackToCardMs: Summary;
  /** From each acknowledgement until its job was created upstream. */
  ackToJobMs: Summary;
  /** Commands whose card and job both arrived (all, unless something was lost). */
  started: number;
  /** Each round's own p99 ratio (docs-agent to bare Bolt): the pooled tail is mostly the worst round's. */
  roundP99Ratios: number[];
  /**
   * CPU time per burst, median over the rounds, in milliseconds, while its load generator ran
   * (its start-up before the first command and its exit after the last answer included, so for
   * docs-agent some of the background work that follows the burst): of the main thread, which
   * answers every command, and of the other threads (V8 compiling and collecting garbage beside
   * it, on the same two cores).
   */
  burstCpuMs: Record<'bare' | 'ours', ThreadCpu>;
}

/** Sends the burst to `child`, noting the CPU its threads used meanwhile. */
async function burst(
  world: Awaited<ReturnType<typeof taggedWorld>>,
  child: Child,
  label: string,
  options: ColdBurstOptions,
) {
  const before = child.threadCpuMs();
  const load = await world.load(child.base, label, options.commands, options.concurrency);
  const after = child.threadCpuMs();
  return { load, cpu: { main: after.main - before.main, others: after.others - before.others } };
}

/**
 * The first commands after start-up: a burst right after each process is ready, against a bare
 * Bolt app and against docs-agent, each started afresh for every round and warmed alike (docs-agent
 * warms itself before it says it is ready; bare Bolt gets the same commands first). For docs-agent,
 * also the time from each acknowledgement to its card and its job.
 */
export async function coldBurst(options: ColdBurstOptions): Promise<ColdBurstResult> {
  const world = await taggedWorld({ latencyMs: options.latencyMs });
  const bareLoads: LoadResult[] = [];
  const oursLoads: LoadResult[] = [];
  const cpu: Record<'bare' | 'ours', ThreadCpu[]> = { bare: [], ours: [] };
  const toCard: number[] = [];
  const toJob: number[] = [];
  try {
    const runBare = async (round: number) => {
      const bare = await startBareBolt(world.botEnv());
      try {
        // Warmed as docs-agent warms itself before it reports ready: up to 100 commands through
        // the receiver over five connections.
        await world.load(bare.base, `bwarm${round}`, WARM_UP_REQUESTS, WARM_UP_LANES);
        const { load, cpu: used } = await burst(world, bare, `bare${round}`, options);
        bareLoads.push(load);
        cpu.bare.push(used);
      } finally {
        await bare.stop();
      }
    };
    const runOurs = async (round: number) => {
      const ours = await startDocsAgent(world.env());
      const label = `cold${round}`;
      try {
        const { load, cpu: used } = await burst(world, ours, label, options);
        oursLoads.push(load);
        cpu.ours.push(used);
        const tags = load.results.map((r) => `${label}-${r.i}`);
        await waitFor(
          'every card and job of the burst',
          () => tags.every((t) => world.createAt.has(t) && world.rootAt.has(t)),
          30_000,
        ).catch(() => undefined);
        for (const r of load.results) {
          const card = world.rootAt.get(`${label}-${r.i}`);
          const job = world.createAt.get(`${label}-${r.i}`);
          if (card === undefined || job === undefined) continue;
          toCard.push(card - r.doneAt);
          // The root post's answer and the agent stand-in's own wait come before the create is seen.
          toJob.push(job - r.doneAt - 2 * options.latencyMs);
        }
      } finally {
        await ours.stop();
      }
    };
    for (let round = 0; round < options.rounds; round++) {
      // Turn about, so that neither always runs on a machine just warmed (or disturbed) by the other.
      if (round % 2 === 0) {
        await runBare(round);
        await runOurs(round);
      } else {
        await runOurs(round);
        await runBare(round);
      }
    }
    const cpuMedian = (runs: ThreadCpu[]) => ({
      main: round(median(runs.map((r) => r.main)), 1),
      others: round(median(runs.map((r) => r.others)), 1),
    });
    return {
      bare: ackRun(pooled(bareLoads)),
      ours: ackRun(pooled(oursLoads)),
      ackToCardMs: summarize(toCard.map((t) => round(t, 1))),
      ackToJobMs: summarize(toJob.map((t) => round(t, 1))),
      started: toJob.length,
      roundP99Ratios: roundP99Ratios(bareLoads, oursLoads),
      burstCpuMs: { bare: cpuMedian(cpu.bare), ours: cpuMedian(cpu.ours) },
    };
  } finally {
    await world.close();
  }
}
