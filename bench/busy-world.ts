import { type AgentStandIn, PROJECT_ID, startAgentStandIn } from '../test/helpers/agent-stand-in.js';
import { SLACK_RATE_LIMITS } from '../test/helpers/slack-rate-limits.js';
import { type SlackCall, type SlackStandIn, startSlackStandIn } from '../test/helpers/slack-stand-in.js';
import { preciseNow } from './stats.js';

/** The busy workspace: 40 channels, two to each of 20 documentation projects, 50 people. */
export const BUSY_CHANNELS = 40;
export const BUSY_PROJECTS = 20;
export const BUSY_PEOPLE = 50;
export const busyChannel = (k: number) => `C0BUSY${k % BUSY_CHANNELS}`;
export const busyPerson = (k: number) => `U0BUSY${k % BUSY_PEOPLE}`;
export const BUSY_CHANNEL_PROJECTS = Array.from(
  { length: BUSY_CHANNELS },
  (_, c) => `${busyChannel(c)}:proj${c % BUSY_PROJECTS}`,
).join(',');

/** The text of command `k`, and of its follow-up: each names the command (`#busy-k#`). */
export const commandText = (k: number) => `Document busy area ${k} #busy-${k}#`;
export const followUpText = (k: number) => `Also cover its limits #busy-${k}#`;
/** The command a text (a card, a prompt) is about. */
export const commandOf = (text: unknown): number | undefined => {
  const found = String(text).match(/#busy-(\d+)#/)?.[1];
  return found === undefined ? undefined : Number(found);
};

/**
 * How long the agent works on run `run` of command `k`'s job: 30 to 90 s, the same in every
 * world, so the limited and unlimited runs get the same script.
 */
export function runLengthMs(k: number, run: number): number {
  let h = Math.imul(k + 1, 0x9e3779b1) ^ Math.imul(run, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h ^= h >>> 13;
  return 30_000 + 60_000 * ((h >>> 0) / 2 ** 32);
}

/** A status card, or a thread: `channel:ts`. */
export const at = (channel: unknown, ts: unknown) => `${String(channel)}:${String(ts)}`;

/** What the stand-ins saw, timed (`preciseNow`), of the calls Slack accepted. */
export interface BusyRecords {
  /** When each command's card (its root chat.postMessage) reached Slack. */
  cardAt: Map<number, number>;
  /** Each command's card, once Slack answered its post. */
  cardOf: Map<number, { channel: string; ts: string }>;
  /** When each run of each command's job reached the agent API, by `k:run`. */
  runSentAt: Map<string, number>;
  /** When each job's latest run ended upstream, and which run that was. */
  endedAt: Map<number, { run: number; at: number }>;
  /** When each chat.update of a message arrived, by `channel:ts`. */
  updates: Map<string, number[]>;
  /** The last reactions.add or reactions.remove on each message, by `channel:ts`. */
  lastReaction: Map<string, number>;
  /** The last agents.sessions.setStatus of each thread, by `channel:ts`. */
  lastSession: Map<string, number>;
  /** When each outcome post arrived, by `threadTs:run` (the run its metadata names). */
  outcomePosts: Map<string, number[]>;
}

/** Notes what one accepted Web API call says about the load's jobs. */
function record(records: BusyRecords, call: SlackCall): void {
  const { method, args } = call;
  const now = preciseNow();
  const push = (map: Map<string, number[]>, key: string) => map.set(key, [...(map.get(key) ?? []), now]);
  if (method === 'chat.update') push(records.updates, at(args.channel, args.ts));
  else if (method === 'reactions.add' || method === 'reactions.remove')
    records.lastReaction.set(at(args.channel, args.timestamp), now);
  else if (method === 'agents.sessions.setStatus')
    records.lastSession.set(at(args.channel_id, args.thread_ts), now);
  else if (method === 'chat.postMessage' && args.thread_ts) {
    const about = (args.metadata as { event_payload?: Record<string, unknown> } | undefined)?.event_payload;
    if (about?.kind === 'outcome')
      push(records.outcomePosts, `${String(args.thread_ts)}:${String(about.run)}`);
  } else if (method === 'chat.postMessage') {
    const k = commandOf(args.text);
    if (k !== undefined && !records.cardAt.has(k)) records.cardAt.set(k, now);
  }
}

export interface BusyWorld {
  slack: SlackStandIn;
  agent: AgentStandIn;
  records: BusyRecords;
  /** Ends each job's latest run when its script says, from now until `close`. */
  startEnding(): void;
  close(): Promise<void>;
}

/**
 * Stand-ins for a busy workspace: Slack (with its published rate limits when `limited`, else
 * only counting calls) and the agent API, each answering after `latencyMs`, recording what
 * docs-agent did for each command. `onCard` hears of each card once Slack answered its post.
 */
export async function busyWorld(options: {
  latencyMs: number;
  limited: boolean;
  onCard: (k: number, card: { channel: string; ts: string }) => void;
}): Promise<BusyWorld> {
  const records: BusyRecords = {
    cardAt: new Map(),
    cardOf: new Map(),
    runSentAt: new Map(),
    endedAt: new Map(),
    updates: new Map(),
    lastReaction: new Map(),
    lastSession: new Map(),
    outcomePosts: new Map(),
  };
  const slack: SlackStandIn = await startSlackStandIn({
    latencyMs: options.latencyMs,
    rateLimits: options.limited ? SLACK_RATE_LIMITS : {},
    hooks: {
      before: (call) => {
        record(records, call);
        return undefined;
      },
      after: ({ method, args }) => {
        const k = method === 'chat.postMessage' && !args.thread_ts ? commandOf(args.text) : undefined;
        if (k === undefined || records.cardOf.has(k)) return;
        for (let i = slack.messages.length - 1; i >= 0; i--) {
          const m = slack.messages[i];
          if (m && !m.thread_ts && m.channel === args.channel && commandOf(m.text) === k) {
            records.cardOf.set(k, { channel: m.channel, ts: m.ts });
            options.onCard(k, { channel: m.channel, ts: m.ts });
            return;
          }
        }
      },
    },
  });
  /** Runs each job's agent has been given, by command. */
  const runs = new Map<number, number>();
  const agent = await startAgentStandIn({
    latencyMs: options.latencyMs,
    projects: [PROJECT_ID, ...Array.from({ length: BUSY_PROJECTS }, (_, p) => `proj${p}`)],
    hooks: {
      before: (op, body) => {
        const k = op === 'get' ? undefined : commandOf(body?.prompt);
        if (k === undefined) return undefined;
        const run = op === 'create' ? 1 : (runs.get(k) ?? 1) + 1;
        runs.set(k, run);
        records.runSentAt.set(`${k}:${run}`, preciseNow());
        return undefined;
      },
    },
  });
  let ending: NodeJS.Timeout | undefined;
  const endDue = () => {
    for (const job of agent.jobs.values()) {
      const k = commandOf(job.prompts[0]);
      const run = job.prompts.length;
      const sent = records.runSentAt.get(`${k}:${run}`);
      if (job.status !== 'active' || k === undefined || sent === undefined) continue;
      if (preciseNow() < sent + runLengthMs(k, run)) continue;
      agent.complete(job.id, `https://github.com/example/docs/pull/${k + 1}`);
      records.endedAt.set(k, { run, at: preciseNow() });
    }
  };
  return {
    slack,
    agent,
    records,
    startEnding: () => {
      ending ??= setInterval(endDue, 100);
    },
    close: async () => {
      clearInterval(ending);
      await slack.close();
      await agent.close();
    },
  };
}
