import { waitFor } from '../test/helpers/http.js';
import { type Child, type LoadResult, startBareBolt, startDocsAgent } from './processes.js';
import { round, type Summary, summarize } from './stats.js';
import { taggedWorld } from './tagged-world.js';

export interface AckPathOptions {
  commands: number;
  concurrency: number;
  warmup: number;
  /** Commands per round; rounds of bare Bolt and docs-agent alternate. */
  roundSize: number;
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
  /**
   * CPU time (user + system) each process used per command while its rounds ran, in
   * milliseconds: the acknowledgement's whole cost, which in a burst every later command waits for.
   */
  cpuPerCommandMs: { bare: number; ours: number };
  /** Each round's own p99 ratio (docs-agent to bare Bolt): the pooled tail is mostly the worst round's. */
  roundP99Ratios: number[];
}

/** The p99 ratio of `ours` to `bare`, round by round. */
export function roundP99Ratios(bare: LoadResult[], ours: LoadResult[]): number[] {
  const p99 = (load: LoadResult) => summarize(load.results.map((r) => r.doneAt - r.sentAt)).p99;
  return ours.map((load, i) => round(p99(load) / p99(bare[i] as LoadResult)));
}

/** Pools the loads of several rounds into one, for the throughput and latency summaries. */
export function pooled(loads: LoadResult[]): LoadResult {
  return {
    startedAt: 0,
    finishedAt: loads.reduce((sum, l) => sum + (l.finishedAt - l.startedAt), 0),
    results: loads.flatMap((l) => l.results),
  };
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
    // Interleaved in rounds, so that whatever else the machine does falls on both alike; each
    // round of docs-agent's starts its jobs before the next round of bare Bolt begins, so that
    // its background work takes little CPU from bare Bolt's acknowledgements.
    const bareLoads: LoadResult[] = [];
    const oursLoads: LoadResult[] = [];
    const cpu = { bare: 0, ours: 0 };
    /** Runs one round against `child`, adding the CPU it used meanwhile to `cpu[who]`. */
    const measured = async (who: 'bare' | 'ours', child: Child, label: string, n: number) => {
      const before = child.cpuMs();
      const result = await load(child.base, label, n);
      cpu[who] += child.cpuMs() - before;
      return result;
    };
    const rounds = Math.max(1, Math.round(options.commands / options.roundSize));
    const count = Math.round(options.commands / rounds);
    for (let round = 0; round < rounds; round++) {
      bareLoads.push(await measured('bare', bare, `bare${round}`, count));
      const label = `ack${round}`;
      oursLoads.push(await measured('ours', ours, label, count));
      await waitFor(
        'every job of the round started',
        () => Array.from({ length: count }, (_, i) => `${label}-${i}`).every((t) => world.createAt.has(t)),
        120_000,
      ).catch(() => undefined);
    }

    const starts: number[] = [];
    for (const r of oursLoads.flatMap((l, round) => l.results.map((x) => ({ ...x, round })))) {
      const tag = `ack${r.round}-${r.i}`;
      const created = world.createAt.get(tag);
      const rooted = world.rootAt.get(tag);
      if (created === undefined || rooted === undefined) continue;
      // The root post's answer is on the path before the create call: the stand-in's own time.
      starts.push(round(Math.max(created, rooted) - r.sentAt - options.latencyMs, 3));
    }
    return {
      bare: ackRun(pooled(bareLoads)),
      ours: ackRun(pooled(oursLoads)),
      startLatencyMs: summarize(starts),
      started: starts.length,
      cpuPerCommandMs: {
        bare: round(cpu.bare / (rounds * count), 3),
        ours: round(cpu.ours / (rounds * count), 3),
      },
      roundP99Ratios: roundP99Ratios(bareLoads, oursLoads),
    };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await world.close();
  }
}
