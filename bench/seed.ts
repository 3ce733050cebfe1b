import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { type AgentStandIn, PROJECT_ID, startAgentStandIn } from '../test/helpers/agent-stand-in.js';
import { tempDatabase } from '../test/helpers/harness.js';
import { type SlackStandIn, startSlackStandIn } from '../test/helpers/slack-stand-in.js';
import { preciseNow } from './stats.js';

/** One job the benchmark put in the store and upstream. */
export interface SeededJob {
  agentJobId: string;
  channel: string;
  threadTs: string;
}

/**
 * Puts `count` active jobs in a SQLite store file and the same jobs, running, in the agent
 * stand-in, as a bot that has been busy for a while would have them: spread over `channels`,
 * each with its root message and first run sent.
 */
export async function seedActiveJobs(options: {
  path: string;
  agent: AgentStandIn;
  /** Gets each job's root message, so the bot can update it. */
  slack: SlackStandIn;
  count: number;
  channels: number;
  pollIntervalMs: number;
  /** Age of each run when the app starts, in milliseconds (per job). */
  runAge: (i: number) => number;
  /** When each job's first poll is due, from now, in milliseconds. */
  firstPollIn: (i: number) => number;
}): Promise<SeededJob[]> {
  const store = openSqliteStore(options.path);
  const now = Date.now();
  const jobs: SeededJob[] = [];
  try {
    for (let i = 0; i < options.count; i++) {
      const channel = `C0SEED${i % options.channels}`;
      const threadTs = `1700000000.${String(i).padStart(6, '0')}`;
      const agentJobId = `job_seed_${i}`;
      const prompt = `Seeded task #seed-${i}#`;
      const { job, run } = await store.insertJob(
        {
          teamId: 'T0TEST',
          channelId: channel,
          requesterId: `U0SEED${i % 50}`,
          instruction: prompt,
          triggerKey: `command:seed-${i}`,
          responseUrl: null,
          pollIntervalMs: options.pollIntervalMs,
        },
        { kind: 'create', prompt, authorId: `U0SEED${i % 50}`, messageTs: null },
        now,
      );
      await store.apply(
        {
          jobId: job.id,
          job: {
            phase: 'active',
            threadTs,
            agentJobId,
            agentStatus: 'active',
            // Whole milliseconds, as the app writes them (the store checks every row it reads).
            runStartedAt: now - Math.round(options.runAge(i)),
            nextPollAt: now + Math.round(options.firstPollIn(i)),
          },
          run: { id: run.id, patch: { state: 'sent', sentAt: now } },
          incrementRunCount: true,
        },
        now,
      );
      options.agent.jobs.set(agentJobId, {
        id: agentJobId,
        status: 'active',
        source: { repository: 'https://github.com/example/docs', ref: `docs-agent/${agentJobId}` },
        model: 'sonnet',
        projectId: PROJECT_ID,
        prLink: null,
        createdAt: new Date(now).toISOString(),
        archivedAt: null,
        prompts: [prompt],
      });
      options.slack.messages.push({ channel, ts: threadTs, text: prompt, bot_id: 'B0BOT', user: 'U0BOT' });
      jobs.push({ agentJobId, channel, threadTs });
    }
  } finally {
    await store.close();
  }
  return jobs;
}

/**
 * Puts in a SQLite store file the default project's earlier runs, finished by the agent after
 * `lengths` milliseconds each, the latest ending an hour ago: what a bot in use for a while knows
 * of how long the project's runs take.
 */
export async function seedFinishedRuns(path: string, lengths: readonly number[]): Promise<void> {
  const store = openSqliteStore(path);
  const endedBy = Date.now() - 60 * 60_000;
  try {
    for (const [i, length] of lengths.entries()) {
      const prompt = `Earlier task #history-${i}#`;
      const { job, run } = await store.insertJob(
        {
          teamId: 'T0TEST',
          channelId: 'C0SEED0',
          requesterId: 'U0SEED0',
          instruction: prompt,
          triggerKey: `command:history-${i}`,
          responseUrl: null,
          pollIntervalMs: 10_000,
        },
        { kind: 'create', prompt, authorId: 'U0SEED0', messageTs: null },
        endedBy - Math.round(length),
      );
      const outcomeAt = endedBy - i * 1_000;
      const sentAt = outcomeAt - Math.round(length);
      await store.apply(
        {
          jobId: job.id,
          job: { phase: 'idle', lastOutcome: 'completed_pr' },
          run: { id: run.id, patch: { state: 'sent', sentAt, outcome: 'completed_pr', outcomeAt } },
          incrementRunCount: true,
        },
        outcomeAt,
      );
    }
  } finally {
    await store.close();
  }
}

/** Stand-ins holding seeded running jobs, timing each thread's first post and every GET. */
export async function seededWorld(
  options: Omit<Parameters<typeof seedActiveJobs>[0], 'path' | 'agent' | 'slack'> & {
    latencyMs: number;
  },
) {
  /** When each thread got its first post (the outcome): thread ts → time. */
  const outcomeAt = new Map<string, number>();
  /** When each GET arrived. */
  const getAt: number[] = [];
  const slack = await startSlackStandIn({
    latencyMs: options.latencyMs,
    hooks: {
      before: (call) => {
        const thread = call.args.thread_ts ? String(call.args.thread_ts) : undefined;
        if (call.method === 'chat.postMessage' && thread && !outcomeAt.has(thread))
          outcomeAt.set(thread, preciseNow());
        return undefined;
      },
    },
  });
  const agent = await startAgentStandIn({
    latencyMs: options.latencyMs,
    hooks: {
      before: (op) => {
        if (op === 'get') getAt.push(preciseNow());
        return undefined;
      },
    },
  });
  const path = tempDatabase();
  const jobs = await seedActiveJobs({ ...options, path, agent, slack });
  return {
    slack,
    agent,
    path,
    jobs,
    outcomeAt,
    getAt,
    async close() {
      await slack.close();
      await agent.close();
    },
  };
}
