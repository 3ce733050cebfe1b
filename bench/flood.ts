import { waitFor } from '../test/helpers/http.js';
import { type AckRun, ackRun, pooled, roundP99Ratios } from './ack-path.js';
import { type Child, type LoadResult, startBareBolt, startDocsAgent, startTunedBolt } from './processes.js';
import { round, type Summary, summarize } from './stats.js';
import { type TaggedWorld, taggedWorld } from './tagged-world.js';

export interface FloodOptions {
  /** Commands offered per second, on a fixed schedule whatever the answers (an open loop). */
  rate: number;
  /** Length of each round's flood, in seconds. */
  seconds: number;
  /** Rounds per app; the apps take turns, in a different order each round. */
  rounds: number;
  /** Most connections the load generator opens at once. */
  connections: number;
  /** Commands each app gets before the first round (closed loop, 50 at a time). */
  warmup: number;
  latencyMs: number;
}

export interface FloodRun extends AckRun {
  /** Commands offered per second. */
  offered: number;
  /**
   * Commands whose whole work was done, per second, from the flood's start until the last was
   * done: for docs-agent, acknowledged, card posted, job created upstream and card updated; for
   * a baseline, acknowledged (it does nothing else).
   */
  completedPerSecond: number;
  /**
   * CPU time (user + system) per command, in milliseconds, from the flood's start until the last
   * command's work was done: for docs-agent, its background work included.
   */
  cpuPerCommandMs: number;
  /** After the flood's last command, how long the rest of the work took (median of rounds), ms. */
  drainMs: number;
  /** Commands whose work was all done (all, unless some was lost or timed out). */
  completed: number;
}

export interface FloodResult {
  bare: FloodRun;
  tuned: FloodRun;
  ours: FloodRun;
  /** For docs-agent: command sent until its job was created upstream (stand-in time removed). */
  startLatencyMs: Summary;
  /** Each round's own p99 ratio (docs-agent to bare Bolt). */
  roundP99Ratios: number[];
}

type Who = 'bare' | 'tuned' | 'ours';

interface Round {
  load: LoadResult;
  cpuMs: number;
  /** When the last command's work was done (a `performance` time, like the load's). */
  doneAt: number;
  completed: number;
}

/** One round against `child`: the flood, then (for docs-agent) until its background work is done. */
async function floodRound(
  world: TaggedWorld,
  who: Who,
  child: Child,
  label: string,
  options: FloodOptions,
): Promise<Round> {
  const count = Math.round(options.rate * options.seconds);
  const before = child.cpuMs();
  const load = await world.load(child.base, label, count, options.connections, options.rate);
  if (who !== 'ours') {
    const acked = load.results.filter((r) => r.status === 200);
    return {
      load,
      cpuMs: child.cpuMs() - before,
      doneAt: Math.max(...load.results.map((r) => r.doneAt)),
      completed: acked.length,
    };
  }
  const tags = load.results.map((r) => `${label}-${r.i}`);
  const done = (t: string) => world.createAt.has(t) && world.updateAt.has(t);
  await waitFor('every job of the flood created and its card updated', () => tags.every(done), 180_000).catch(
    () => undefined,
  );
  const cpuMs = child.cpuMs() - before;
  const finished = tags.filter(done);
  const doneAt = Math.max(
    ...load.results.map((r) => r.doneAt),
    ...finished.map((t) => Math.max(world.createAt.get(t) as number, world.updateAt.get(t) as number)),
  );
  return { load, cpuMs, doneAt, completed: finished.length };
}

function floodRun(rounds: Round[], options: FloodOptions): FloodRun {
  const commands = rounds.reduce((n, r) => n + r.load.results.length, 0);
  const busyMs = rounds.reduce((n, r) => n + (r.doneAt - r.load.startedAt), 0);
  const drains = rounds.map((r) => r.doneAt - Math.max(...r.load.results.map((x) => x.sentAt)));
  const completed = rounds.reduce((n, r) => n + r.completed, 0);
  return {
    ...ackRun(pooled(rounds.map((r) => r.load))),
    offered: options.rate,
    completedPerSecond: round((completed / busyMs) * 1_000, 1),
    cpuPerCommandMs: round(rounds.reduce((n, r) => n + r.cpuMs, 0) / commands, 3),
    drainMs: round(
      [...drains.map((d) => Math.max(0, d))].sort((a, b) => a - b)[Math.floor(drains.length / 2)] ??
        Number.NaN,
      1,
    ),
    completed,
  };
}

/**
 * A sustained flood: commands offered at a constant rate for several seconds, against a bare
 * Bolt app as a user writes it, a tuned one set up as docs-agent sets up its Bolt, and
 * docs-agent, each warmed alike, in turns. Long enough that docs-agent's background work (card
 * post, job creation, card update) competes with the acknowledgements inside the window; its
 * CPU and completion rate count until that work is done.
 */
export async function flood(options: FloodOptions): Promise<FloodResult> {
  const world = await taggedWorld({ latencyMs: options.latencyMs });
  const children: Child[] = [];
  try {
    const apps: Record<Who, Child> = {
      bare: await startBareBolt(world.botEnv()),
      tuned: await startTunedBolt(world.botEnv()),
      ours: await startDocsAgent(world.env()),
    };
    children.push(...Object.values(apps));
    // Warmed alike: the same closed-loop commands to each before the first round.
    for (const [who, child] of Object.entries(apps))
      await world.load(child.base, `warm${who}`, options.warmup, 50);
    await waitFor('warm-up jobs started', () => world.agent.jobs.size >= options.warmup, 60_000);
    const rounds: Record<Who, Round[]> = { bare: [], tuned: [], ours: [] };
    const order: Who[] = ['bare', 'tuned', 'ours'];
    for (let r = 0; r < options.rounds; r++) {
      // A different app goes first each round, so none always follows the same one.
      for (const who of [...order.slice(r % 3), ...order.slice(0, r % 3)])
        rounds[who].push(await floodRound(world, who, apps[who], `flood${who}${r}`, options));
    }
    const starts: number[] = [];
    rounds.ours.forEach((r, n) => {
      for (const x of r.load.results) {
        const created = world.createAt.get(`floodours${n}-${x.i}`);
        // The root post's answer comes before the create call: the stand-in's own time.
        if (created !== undefined) starts.push(round(created - x.sentAt - options.latencyMs, 1));
      }
    });
    return {
      bare: floodRun(rounds.bare, options),
      tuned: floodRun(rounds.tuned, options),
      ours: floodRun(rounds.ours, options),
      startLatencyMs: summarize(starts),
      roundP99Ratios: roundP99Ratios(
        rounds.bare.map((r) => r.load),
        rounds.ours.map((r) => r.load),
      ),
    };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await world.close();
  }
}
