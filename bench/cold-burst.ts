import { waitFor } from '../test/helpers/http.js';
import { type AckRun, ackRun, pooled } from './ack-path.js';
import type { LoadResult } from './processes.js';
import { startBareBolt, startDocsAgent } from './processes.js';
import { round, type Summary, summarize } from './stats.js';
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
}

/**
 * The first commands after start-up: a burst right after each process says it is ready, against
 * a bare Bolt app and against docs-agent, each started afresh for every round. For docs-agent,
 * also the time from each acknowledgement to its card and its job.
 */
export async function coldBurst(options: ColdBurstOptions): Promise<ColdBurstResult> {
  const world = await taggedWorld({ latencyMs: options.latencyMs });
  const bareLoads: LoadResult[] = [];
  const oursLoads: LoadResult[] = [];
  const toCard: number[] = [];
  const toJob: number[] = [];
  try {
    for (let round = 0; round < options.rounds; round++) {
      const bare = await startBareBolt(world.botEnv());
      bareLoads.push(await world.load(bare.base, `bare${round}`, options.commands, options.concurrency));
      await bare.stop();

      const ours = await startDocsAgent(world.env());
      const label = `cold${round}`;
      try {
        const load = await world.load(ours.base, label, options.commands, options.concurrency);
        oursLoads.push(load);
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
    }
    return {
      bare: ackRun(pooled(bareLoads)),
      ours: ackRun(pooled(oursLoads)),
      ackToCardMs: summarize(toCard.map((t) => round(t, 1))),
      ackToJobMs: summarize(toJob.map((t) => round(t, 1))),
      started: toJob.length,
    };
  } finally {
    await world.close();
  }
}
