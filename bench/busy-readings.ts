import type { MethodCounts } from '../test/helpers/slack-rate-limits.js';
import type { BusyLoad } from './busy-load.js';
import { at, type BusyWorld, commandOf } from './busy-world.js';
import { round, type Summary, summarize } from './stats.js';

/**
 * What a finished job's thread shows, as Slack holds it: the card's text and blocks, the emoji on
 * its root, its agent session's status, the runs the agent had, and the emoji on the follow-up
 * (when the job had one).
 */
export interface ThreadState {
  card: { text: string; blocks?: unknown[] } | undefined;
  rootEmoji: string[];
  session: string | undefined;
  runs: number;
  followUpEmoji: string[] | undefined;
}

/** Why a finished job's thread is not in its final state. */
export type Mismatch = 'card' | 'root emoji' | 'session' | 'follow-up emoji';

/**
 * How a finished command's thread differs from what docs-agent renders for it, its last run done
 * with a pull request (`blocks/status-card.ts`, `delivery/sessions.ts`, `delivery/kinds/reaction.ts`):
 * the card's status ":white_check_mark: Done" (no hourglass) and its run count; no emoji on the
 * root, which is the card and shows the state itself; the session `active` (waiting for a
 * follow-up); and :eyes: on a follow-up the agent took.
 */
export function mismatches(state: ThreadState): Mismatch[] {
  const found: Mismatch[] = [];
  const text = state.card?.text ?? '';
  const blocks = JSON.stringify(state.card?.blocks ?? []);
  const done = text.includes(':white_check_mark: Done') && !text.includes(':hourglass');
  if (!done || !blocks.includes(JSON.stringify(`*Runs*\n${state.runs}`).slice(1, -1))) found.push('card');
  if (state.rootEmoji.length !== 0) found.push('root emoji');
  if (state.session !== 'active') found.push('session');
  if (state.followUpEmoji && !state.followUpEmoji.includes('eyes')) found.push('follow-up emoji');
  return found;
}

/** One run of the busy workspace's load, as measured. */
export interface BusyRun {
  instances: number;
  limited: boolean;
  commands: number;
  /** Commands and follow-ups docs-agent did not answer 200. */
  non200: number;
  followUps: number;
  /** Runs the agent was given (jobs created, follow-ups sent). */
  runs: number;
  /** Jobs whose latest run ended upstream. */
  finished: number;
  /** By method: 429s, calls made during a Retry-After, and all calls per run. */
  refused: Record<string, number>;
  duringRetryAfter: Record<string, number>;
  callsPerRun: Record<string, number>;
  /** From each signed command sent until its card's chat.postMessage reached Slack. */
  commandToCardMs: Summary;
  /** From a job's last run ending upstream until its outcome post reached Slack. */
  endToOutcomeMs: Summary;
  /** From a job's end until the last chat.update of its card, reactions.* on its root, session status call. */
  endToCardMs: Summary;
  endToEmojiMs: Summary;
  endToSessionMs: Summary;
  /** Finished jobs whose thread is not in its final state, and why (a job may have several). */
  mismatched: number;
  mismatchedBy: Partial<Record<Mismatch, number>>;
  /** The emoji left on the roots that are off, by what they show (`none`, or names joined by `+`). */
  offRootEmoji: Record<string, number>;
  /** Commands that got no job, follow-ups the agent never got, finished jobs with no outcome post. */
  lost: { commandsWithoutJob: number; followUpsNotRun: number; jobsWithoutOutcome: number };
  /** Runs with more than one outcome post. */
  doubled: number;
  /** How long after the last command the run waited, and whether every thread got final. */
  waitedMs: number;
  allFinal: boolean;
}

const byMethod = (counts: Record<string, MethodCounts>, value: (c: MethodCounts) => number) =>
  Object.fromEntries(
    Object.entries(counts)
      .map(([method, c]) => [method, value(c)] as const)
      .filter(([, n]) => n > 0)
      .sort(([a], [b]) => a.localeCompare(b)),
  );

/** Each command's job upstream, its card and what its thread shows now. */
export function threads(world: BusyWorld, load: BusyLoad) {
  const { slack, agent, records } = world;
  const messages = new Map(slack.messages.map((m) => [at(m.channel, m.ts), m]));
  const replies = new Map(slack.humans.map((h) => [at(h.channel, h.thread_ts), h]));
  return [...agent.jobs.values()].flatMap((job) => {
    const k = commandOf(job.prompts[0]);
    const card = k === undefined ? undefined : records.cardOf.get(k);
    if (k === undefined || !card) return [];
    const message = messages.get(at(card.channel, card.ts));
    const reply = load.followUps.has(k) ? replies.get(at(card.channel, card.ts)) : undefined;
    const state: ThreadState = {
      card: message,
      rootEmoji: slack.reactionsOn(card.channel, card.ts),
      session: slack.sessionOf(card.channel, card.ts)?.status,
      runs: job.prompts.length,
      followUpEmoji: reply ? slack.reactionsOn(card.channel, reply.ts) : undefined,
    };
    return [{ k, card, runs: job.prompts.length, ended: records.endedAt.get(k), state }];
  });
}

/** Whether every command has a job whose last run ended, was posted and shows as final. */
export function allFinal(world: BusyWorld, load: BusyLoad): boolean {
  const all = threads(world, load);
  return (
    load.pendingFollowUps() === 0 &&
    all.length === load.commands.size &&
    all.every(
      (t) =>
        t.ended?.run === t.runs &&
        world.records.outcomePosts.has(`${t.card.ts}:${t.runs}`) &&
        mismatches(t.state).length === 0,
    )
  );
}

/** The figures of one run, from what the stand-ins recorded. */
export function busyReadings(
  world: BusyWorld,
  load: BusyLoad,
  run: Pick<BusyRun, 'instances' | 'limited' | 'waitedMs' | 'allFinal'>,
): BusyRun {
  const { records } = world;
  const all = threads(world, load);
  const counts = world.slack.rateLimitCounts() ?? {};
  const runs = [...world.agent.jobs.values()].reduce((n, job) => n + job.prompts.length, 0);
  const toCard: number[] = [];
  const toOutcome: number[] = [];
  const cosmetic = { card: [] as number[], emoji: [] as number[], session: [] as number[] };
  const mismatchedBy: Partial<Record<Mismatch, number>> = {};
  const offRootEmoji: Record<string, number> = {};
  let mismatched = 0;
  let jobsWithoutOutcome = 0;
  for (const [k, sent] of load.commands) {
    const card = records.cardAt.get(k);
    if (card !== undefined) toCard.push(card - sent.at);
  }
  for (const t of all) {
    const ended = t.ended?.run === t.runs ? t.ended.at : undefined;
    if (ended === undefined) continue;
    const outcome = records.outcomePosts.get(`${t.card.ts}:${t.runs}`)?.[0];
    if (outcome === undefined) jobsWithoutOutcome += 1;
    else toOutcome.push(outcome - ended);
    const off = mismatches(t.state);
    if (off.length > 0) mismatched += 1;
    for (const why of off) mismatchedBy[why] = (mismatchedBy[why] ?? 0) + 1;
    if (off.includes('root emoji')) {
      const shown = [...t.state.rootEmoji].sort().join('+') || 'none';
      offRootEmoji[shown] = (offRootEmoji[shown] ?? 0) + 1;
    }
    const since = (last: number | undefined, into: number[]) => {
      if (last !== undefined && last >= ended) into.push(last - ended);
    };
    const root = at(t.card.channel, t.card.ts);
    if (!off.includes('card')) since(records.updates.get(root)?.at(-1), cosmetic.card);
    if (!off.includes('root emoji')) since(records.lastReaction.get(root), cosmetic.emoji);
    if (!off.includes('session')) since(records.lastSession.get(root), cosmetic.session);
  }
  const ms = (values: number[]) => summarize(values.map((v) => round(v, 1)));
  const followUps = [...load.followUps.values()];
  return {
    ...run,
    commands: load.commands.size,
    non200: [...load.commands.values(), ...followUps].filter((s) => s.status !== 200).length,
    followUps: followUps.length,
    runs,
    finished: all.filter((t) => t.ended?.run === t.runs).length,
    refused: byMethod(counts, (c) => c.refused),
    duringRetryAfter: byMethod(counts, (c) => c.duringRetryAfter),
    callsPerRun: byMethod(counts, (c) => round((c.accepted + c.refused) / Math.max(1, runs), 2)),
    commandToCardMs: ms(toCard),
    endToOutcomeMs: ms(toOutcome),
    endToCardMs: ms(cosmetic.card),
    endToEmojiMs: ms(cosmetic.emoji),
    endToSessionMs: ms(cosmetic.session),
    mismatched,
    mismatchedBy,
    offRootEmoji,
    lost: {
      commandsWithoutJob: load.commands.size - all.length,
      followUpsNotRun: [...load.followUps.keys()].filter((k) => all.find((t) => t.k === k)?.runs !== 2)
        .length,
      jobsWithoutOutcome,
    },
    doubled: [...records.outcomePosts.values()].filter((posts) => posts.length > 1).length,
  };
}
