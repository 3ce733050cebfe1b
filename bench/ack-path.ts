import { waitFor } from '../test/helpers/http.js';
import { type Child, type LoadResult, startBareBolt, startDocsAgent } from './processes.js';
import { round, type Summary, summarize } from './stats.js';
import { taggedWorld } from './tagged-world.js';

export interface AckPathOptions {
  commands: number;
  concurrency: number;
  warmup: number;
  /** Latency of every stand-in answer, in milliseconds. */
  latencyMs: number;
}

export interface AckRun {
  throughput: number;
  latencyMs: Summary;
  non200: number;
}

export interface AckPathResult {
  bare: AckRun;
  ours: AckRun;
  /** Command received until the job was created upstream with its root message posted. */
  startLatencyMs: Summary;
  /** How many of the commands had started when measured (all, unless something was lost). */
  started: number;
}

export function ackRun(load: LoadResult): AckRun {
  const ok = load.results.filter((r) => r.status === 200);
  return {
    throughput: round((load.results.length / (load.finishedAt - load.startedAt)) * 1_000, 1),
    latencyMs: summarize(load.results.map((r) => round(r.doneAt - r.sentAt, 3))),
    non200: load.results.length - ok.length,
  };
}

/**
 * Ack path and start latency: the same burst of signed `/docs-agent` commands, from a load
 * generator process, against a bare Bolt app that only acknowledges and against docs-agent doing
 * its real work (store, root post, create call).
 */
export async function ackPath(options: AckPathOptions): Promise<AckPathResult> {
  const world = await taggedWorld({ latencyMs: options.latencyMs });
  const children: Child[] = [];
  try {
    const bare = await startBareBolt(world.botEnv());
    const ours = await startDocsAgent(world.env());
    children.push(bare, ours);
    const load = (url: string, label: string, count: number) =>
      world.load(url, label, count, options.concurrency);
    // Warm both (JIT, connection pools, Slack look-ups cached per person), then measure each.
    await load(bare.base, 'warm', options.warmup);
    await load(ours.base, 'warm', options.warmup);
    await waitFor('warm-up jobs started', () => world.agent.jobs.size >= options.warmup, 60_000);
    const bareLoad = await load(bare.base, 'bare', options.commands);
    const oursLoad = await load(ours.base, 'ack', options.commands);
    await waitFor('every job started', () => world.createAt.size >= options.commands, 120_000).catch(
      () => undefined,
    );

    const starts: number[] = [];
    for (const r of oursLoad.results) {
      const tag = `ack-${r.i}`;
      const created = world.createAt.get(tag);
      const rooted = world.rootAt.get(tag);
      if (created === undefined || rooted === undefined) continue;
      // The root post's answer is on the path before the create call: the stand-in's own time.
      starts.push(round(Math.max(created, rooted) - r.sentAt - options.latencyMs, 3));
    }
    return {
      bare: ackRun(bareLoad),
      ours: ackRun(oursLoad),
      startLatencyMs: summarize(starts),
      started: starts.length,
    };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await world.close();
  }
}
