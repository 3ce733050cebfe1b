import { type AgentStandIn, PROJECT_ID, startAgentStandIn } from '../test/helpers/agent-stand-in.js';
import { tempDatabase, testEnv } from '../test/helpers/harness.js';
import { SIGNING_SECRET } from '../test/helpers/signing.js';
import { BOT_TOKEN, type SlackStandIn, startSlackStandIn } from '../test/helpers/slack-stand-in.js';
import { type LoadResult, runLoad } from './processes.js';
import { preciseNow } from './stats.js';

/**
 * Channels the commands come from, each its own documentation project: the agent API takes 100
 * instructions per project an hour, and docs-agent refuses beyond that, so 40 projects let every
 * command of a 3,300-command run start a real job.
 */
export const BENCH_CHANNELS = 40;
const channelProjects = Array.from({ length: BENCH_CHANNELS }, (_, i) => `C0BENCH${i}:proj${i}`).join(',');

/** The tag every bench command carries in its text (`#label-i#`), found again in what the app sends. */
const tagOf = (text: unknown) => String(text).match(/#([a-z0-9]+-\d+)#/)?.[1];

/** Stand-ins for Slack and the agent API that time, per command tag, what the app sent for it. */
export interface TaggedWorld {
  slack: SlackStandIn;
  agent: AgentStandIn;
  /** When the root message (the status card) of each tagged command reached Slack. */
  rootAt: Map<string, number>;
  /** When the create call of each tagged command reached the agent API. */
  createAt: Map<string, number>;
  /** When the status card of each tagged command was first updated (after its job was created). */
  updateAt: Map<string, number>;
  /** When each thread post (an outcome, a notice) reached Slack, by thread. */
  threadPostAt: Map<string, number>;
  /** docs-agent's environment against these stand-ins, on a new store, with `overrides`. */
  env(overrides?: Record<string, string>): Record<string, string>;
  /** The bare-Bolt and naive-bot environment against these stand-ins. */
  botEnv(): Record<string, string>;
  /**
   * Sends `count` signed commands tagged `label-i`, from a load generator process: `concurrency`
   * at a time, or with `rate`, that many a second on a fixed schedule (at most `concurrency`
   * connections).
   */
  load(url: string, label: string, count: number, concurrency: number, rate?: number): Promise<LoadResult>;
  close(): Promise<void>;
}

export async function taggedWorld(options: {
  latencyMs: number;
  /** Upstream jobs end after this many GETs (default: never). */
  finishAfterGets?: number;
}): Promise<TaggedWorld> {
  const rootAt = new Map<string, number>();
  const createAt = new Map<string, number>();
  const threadPostAt = new Map<string, number>();
  const updateAt = new Map<string, number>();
  const slack: SlackStandIn = await startSlackStandIn({
    latencyMs: options.latencyMs,
    hooks: {
      before: (call) => {
        if (call.method === 'chat.update') {
          const card = slack.messages.find((m) => m.ts === call.args.ts && m.channel === call.args.channel);
          const tag = tagOf(card?.text) ?? tagOf(JSON.stringify(call.args));
          if (tag && !updateAt.has(tag)) updateAt.set(tag, preciseNow());
        }
        if (call.method !== 'chat.postMessage') return undefined;
        const threadTs = call.args.thread_ts;
        if (threadTs) threadPostAt.set(String(threadTs), preciseNow());
        const tag = threadTs ? undefined : tagOf(call.args.text);
        if (tag) rootAt.set(tag, preciseNow());
        return undefined;
      },
    },
  });
  const agent = await startAgentStandIn({
    latencyMs: options.latencyMs,
    projects: [PROJECT_ID, ...Array.from({ length: BENCH_CHANNELS }, (_, i) => `proj${i}`)],
    ...(options.finishAfterGets !== undefined ? { finishAfterGets: options.finishAfterGets } : {}),
    hooks: {
      // On arrival, as the Slack stand-in's hook is: after the latency it would be a round trip late.
      arrived: (op, body) => {
        const tag = op === 'create' ? tagOf(body?.prompt) : undefined;
        if (tag) createAt.set(tag, preciseNow());
      },
    },
  });
  return {
    slack,
    agent,
    rootAt,
    createAt,
    updateAt,
    threadPostAt,
    env: (overrides = {}) =>
      testEnv(slack, agent, tempDatabase(), {
        LOG_LEVEL: 'info',
        DOCS_AGENT_API_TIMEOUT_MS: '6000',
        POLL_INTERVAL_MS: '10000',
        POLL_MAX_INTERVAL_MS: '300000',
        POLL_MAX_RPS: '10',
        // Thousands of commands from a few people: the per-person limit is not what is measured.
        MAX_INSTRUCTIONS_PER_USER_PER_HOUR: '100000',
        CHANNEL_PROJECTS: channelProjects,
        ...overrides,
      }),
    botEnv: () => {
      const env = testEnv(slack, agent, '');
      return {
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_BOT_TOKEN: BOT_TOKEN,
        SLACK_API_URL: slack.apiUrl,
        DOCS_AGENT_API_URL: env.DOCS_AGENT_API_URL,
        DOCS_AGENT_API_KEY: env.DOCS_AGENT_API_KEY,
        DOCS_AGENT_PROJECT_ID: env.DOCS_AGENT_PROJECT_ID,
        PORT: '0',
      };
    },
    load: (url, label, count, concurrency, rate) =>
      runLoad({
        ...(rate ? { rate } : {}),
        url,
        secret: SIGNING_SECRET,
        count,
        concurrency,
        users: 50,
        channels: BENCH_CHANNELS,
        label,
        responseBase: slack.responseUrl('bench').replace(/\/bench$/, ''),
      }),
    close: async () => {
      await slack.close();
      await agent.close();
    },
  };
}
