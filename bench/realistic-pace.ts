import { waitFor } from '../test/helpers/http.js';
import { type Child, type LoadResult, startDocsAgent, startNaiveBot } from './processes.js';
import { median, round, type Summary, summarize } from './stats.js';
import { type TaggedWorld, taggedWorld } from './tagged-world.js';

export interface RealisticPaceOptions {
  /** Commands per round, per bot. */
  commands: number;
  /** One command every this many milliseconds, on the load generator's fixed schedule. */
  intervalMs: number;
  /** Rounds per bot; the bots take turns, a different one first each round. */
  rounds: number;
  /** Latency of every stand-in answer, in milliseconds: one round trip. */
  latencyMs: number;
  /** Warm-up commands each bot gets before the first round (at least one per load-generator person). */
  warmup: number;
}

export interface PaceRun {
  /** Commands sent, and those not answered 200. */
  sent: number;
  non200: number;
  /** Commands whose card and create call were both seen (all, unless something was lost). */
  measured: number;
  /** From each command (when it was due) until its acknowledgement came back, in milliseconds. */
  ackMs: Summary;
  /** From each command until its status card reached Slack, in milliseconds. */
  cardMs: Summary;
  /** From each command until its create call reached the agent API, in milliseconds. */
  jobMs: Summary;
}

/** One round's medians, in milliseconds, and which bot went first. */
export interface PaceRound {
  first: 'ours' | 'naive';
  ours: { card: number; job: number };
  naive: { card: number; job: number };
}

export interface RealisticPaceResult {
  intervalMs: number;
  /** One round trip: the latency of every stand-in answer, in milliseconds. */
  roundTripMs: number;
  ours: PaceRun;
  naive: PaceRun;
  /** docs-agent's median minus the naive bot's, in round trips (the target: at most 0.5 each). */
  behindNaive: { card: number; job: number };
  rounds: PaceRound[];
}

type Who = 'ours' | 'naive';

/** Every tag of a load, found again in what the bot sent: card, create call, and when it was sent. */
const readings = (world: TaggedWorld, label: string, load: LoadResult) =>
  load.results.map((r) => {
    const tag = `${label}-${r.i}`;
    const card = world.rootAt.get(tag);
    const job = world.createAt.get(tag);
    return {
      ok: r.status === 200,
      ack: round(r.doneAt - r.sentAt, 3),
      card: card === undefined ? undefined : round(card - r.sentAt, 3),
      job: job === undefined ? undefined : round(job - r.sentAt, 3),
    };
  });

type Reading = ReturnType<typeof readings>[number];

function paceRun(all: Reading[]): PaceRun {
  const seen = all.filter((r) => r.card !== undefined && r.job !== undefined);
  return {
    sent: all.length,
    non200: all.filter((r) => !r.ok).length,
    measured: seen.length,
    ackMs: summarize(all.map((r) => r.ack)),
    cardMs: summarize(seen.map((r) => r.card as number)),
    jobMs: summarize(seen.map((r) => r.job as number)),
  };
}

/** Waits until every command of `label` has its job created upstream (what is lost stays unmeasured). */
const created = (world: TaggedWorld, label: string, count: number, ms: number) =>
  waitFor(
    `every job of ${label} created`,
    () => Array.from({ length: count }, (_, i) => `${label}-${i}`).every((t) => world.createAt.has(t)),
    ms,
  ).catch(() => undefined);

/**
 * Realistic pace: commands one every `intervalMs` (a team at work, not a burst), each stand-in
 * answer `latencyMs` late, to docs-agent and to the naive bot (`bench/naive-bot.mjs`: acknowledge,
 * post the root message, create the job), on the same stand-ins, taking turns round by round.
 * Per command: when its status card reached Slack and when its create call reached the agent
 * API, from when it was due. The limit: the card after no round trip, the job after one (the
 * card's answer, which the job's thread needs).
 */
export async function realisticPace(options: RealisticPaceOptions): Promise<RealisticPaceResult> {
  const world = await taggedWorld({ latencyMs: options.latencyMs });
  const children: Child[] = [];
  // No job is polled while the part runs: polls are not on the path measured, and the naive
  // bot's every-open-job-at-once polls would stall its own commands.
  const noPolls = '3600000';
  try {
    const ours = await startDocsAgent(
      world.env({ POLL_INTERVAL_MS: noPolls, POLL_MAX_INTERVAL_MS: noPolls }),
    );
    children.push(ours);
    const naive = await startNaiveBot({ ...world.botEnv(), POLL_INTERVAL_MS: noPolls });
    children.push(naive);
    const bots: Record<Who, Child> = { ours, naive };
    const roundMs = options.commands * options.intervalMs;
    // Warmed alike: the same commands, from every person and channel of the load generator, so
    // that what docs-agent keeps per person and per channel is as warm as a real team's.
    for (const who of ['naive', 'ours'] as const) {
      await world.load(bots[who].base, `warm${who}`, options.warmup, 10);
      await created(world, `warm${who}`, options.warmup, 60_000);
    }
    const all: Record<Who, Reading[]> = { ours: [], naive: [] };
    const rounds: PaceRound[] = [];
    for (let n = 0; n < options.rounds; n++) {
      const order: Who[] = n % 2 === 0 ? ['naive', 'ours'] : ['ours', 'naive'];
      const medians = { ours: { card: 0, job: 0 }, naive: { card: 0, job: 0 } };
      for (const who of order) {
        const label = `pace${who}${n}`;
        const load = await world.load(
          bots[who].base,
          label,
          options.commands,
          10,
          1_000 / options.intervalMs,
        );
        // Each round's jobs are created before the next begins: no bot's work overlaps the other's.
        await created(world, label, options.commands, 30_000 + roundMs);
        const got = readings(world, label, load);
        all[who].push(...got);
        const values = (k: 'card' | 'job') => got.flatMap((r) => (r[k] === undefined ? [] : [r[k]]));
        medians[who] = { card: median(values('card')), job: median(values('job')) };
      }
      rounds.push({ first: order[0] as Who, ...medians });
    }
    const result = { ours: paceRun(all.ours), naive: paceRun(all.naive) };
    const behind = (k: 'cardMs' | 'jobMs') =>
      round((result.ours[k].p50 - result.naive[k].p50) / options.latencyMs, 2);
    return {
      intervalMs: options.intervalMs,
      roundTripMs: options.latencyMs,
      ...result,
      behindNaive: { card: behind('cardMs'), job: behind('jobMs') },
      rounds,
    };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await world.close();
  }
}
