import pg from 'pg';
import { expect } from 'vitest';
import { type AgentStandInOptions, PROJECT_ID, startAgentStandIn } from '../helpers/agent-stand-in.js';
import { testEnv } from '../helpers/harness.js';
import { sleep } from '../helpers/http.js';
import { messageEvent, slashCommand } from '../helpers/payloads.js';
import { freshSchemaUrl } from '../helpers/postgres.js';
import { startSlackStandIn } from '../helpers/slack-stand-in.js';
import { type AppProcess, isRunning, launch, sendTo } from './app-process.js';
import { account, type Counts, type Instruction } from './ledger.js';
import { recordRow } from './report.js';

let serial = 0;

/**
 * Channels the commands come from, each its own documentation project: the agent API takes 100
 * instructions per project an hour and the bot refuses beyond that, so a few hundred
 * instructions need several projects to start real jobs rather than be refused.
 */
const CHANNELS = Array.from({ length: 5 }, (_, i) => `C0MULTI${i}`);

/**
 * Several instances of the built app on one PostgreSQL store and one set of stand-ins, with
 * requests spread over the live ones as a load balancer would, and a record of every instruction.
 */
export async function createCluster(options: {
  size: number;
  env?: Record<string, string>;
  agent?: AgentStandInOptions;
  /** How long every Slack Web API answer takes, in milliseconds. */
  slackLatencyMs?: number;
  /** How far each slot's clock is off (ms; negative: behind), applied with faketime. */
  clockOffsetsMs?: number[];
}) {
  const slack = await startSlackStandIn(
    options.slackLatencyMs === undefined ? {} : { latencyMs: options.slackLatencyMs },
  );
  const agent = await startAgentStandIn({
    finishAfterGets: 2,
    projects: [PROJECT_ID, ...CHANNELS.map((_, i) => `proj${i}`)],
    ...options.agent,
  });
  const databaseUrl = await freshSchemaUrl();
  const env = testEnv(slack, agent, '/nonexistent/unused.sqlite', {
    DATABASE_URL: databaseUrl,
    INSTANCE_TIMEOUT_MS: '1500',
    POLL_INTERVAL_MS: '30',
    POLL_MAX_INTERVAL_MS: '200',
    DOCS_AGENT_API_TIMEOUT_MS: '1000',
    LOG_LEVEL: 'info',
    // One person gives every command here; the hourly per-person limit is not under test.
    MAX_INSTRUCTIONS_PER_USER_PER_HOUR: '100000',
    CHANNEL_PROJECTS: CHANNELS.map((c, i) => `${c}:proj${i}`).join(','),
    ...options.env,
  });
  const slots: (AppProcess | undefined)[] = Array.from({ length: options.size }, () => undefined);
  /** Every process ever started, for its log. */
  const processes: AppProcess[] = [];
  /** The slot each process was started in. */
  const slotOf = new Map<AppProcess, number>();
  const instructions: Instruction[] = [];
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });

  const live = () => slots.filter(isRunning);
  const pick = (except?: AppProcess) => {
    const candidates = live().filter((a) => a !== except);
    return candidates[Math.floor(Math.random() * candidates.length)];
  };

  const send = sendTo;

  const cluster = {
    slack,
    agent,
    instructions,
    processes,
    live,
    inSlot: (slot: number) => slots[slot],
    /** Every process ever started, by the slot it ran in. */
    processesBySlot(): Map<number, AppProcess[]> {
      const by = new Map<number, AppProcess[]>();
      for (const app of processes) {
        const slot = slotOf.get(app) ?? -1;
        by.set(slot, [...(by.get(slot) ?? []), app]);
      }
      return by;
    },
    async start(slot: number) {
      const offset = options.clockOffsetsMs?.[slot];
      const app = await launch(env, offset === undefined ? {} : { clockOffsetMs: offset });
      slots[slot] = app;
      processes.push(app);
      slotOf.set(app, slot);
      return app;
    },
    /** SIGKILL (or SIGTERM when `graceful`) the instance in `slot`, and wait until it is gone. */
    async stop(slot: number, graceful: boolean): Promise<number | null> {
      const app = slots[slot];
      if (!isRunning(app)) return null;
      if (graceful) return app.stop();
      app.kill();
      return app.exited;
    },
    /** `/docs-agent <prompt>` through some live instance; Slack does not retry slash commands. */
    async command(prompt: string, user = 'U0ALICE'): Promise<Instruction> {
      const responseId = `r${++serial}`;
      const ins: Instruction = { prompt, kind: 'command', user, acked: false, responseId };
      instructions.push(ins);
      const body = slashCommand({
        text: prompt,
        user_id: user,
        channel_id: CHANNELS[serial % CHANNELS.length] as string,
        response_url: slack.responseUrl(responseId),
      });
      ins.acked = await send(pick(), body, 'application/x-www-form-urlencoded');
      return ins;
    },
    /**
     * A thread reply as Slack delivers it: retried (same event id) until acknowledged, each try
     * to whichever instance the balancer picks; then, like a Slack retry after a slow answer,
     * delivered once more to a different instance.
     */
    async reply(threadTs: string, prompt: string, user = 'U0BOB'): Promise<Instruction> {
      const messageTs = `17200000${String(++serial).padStart(4, '0')}.000100`;
      const channel = slack.messages.find((m) => m.ts === threadTs)?.channel ?? 'C0GENERAL';
      const ins: Instruction = { prompt, kind: 'reply', user, acked: false, threadTs, messageTs, channel };
      instructions.push(ins);
      const body = messageEvent(
        { channel, thread_ts: threadTs, ts: messageTs, user, text: prompt },
        { event_id: `EvC${serial}` },
      );
      let last: AppProcess | undefined;
      for (let i = 0; i < 4 && !ins.acked; i++) {
        last = pick();
        const headers: Record<string, string> = i ? { 'x-slack-retry-num': String(i) } : {};
        ins.acked = await send(last, body, 'application/json', headers);
        if (!ins.acked) await sleep(300);
      }
      if (ins.acked)
        await send(pick(last), body, 'application/json', {
          'x-slack-retry-num': '1',
          'x-slack-retry-reason': 'http_timeout',
        });
      return ins;
    },
    rootOf: (prompt: string) => slack.messages.find((m) => !m.thread_ts && m.text.includes(prompt)),
    /** Whether the store shows nothing left to do. */
    async settled(): Promise<boolean> {
      const count = async (sql: string) => Number((await db.query(sql)).rows[0]?.n ?? 0);
      const open = await count(
        "SELECT COUNT(*) AS n FROM jobs WHERE phase IN ('accepted', 'posting', 'creating', 'active')",
      );
      const runs = await count(
        "SELECT COUNT(*) AS n FROM runs WHERE state IN ('pending', 'ready', 'sending')",
      );
      const undelivered = await count(
        'SELECT COUNT(*) AS n FROM outbox WHERE delivered_at IS NULL AND dead_at IS NULL',
      );
      return open + runs + undelivered === 0;
    },
    account: (details: string[]): Counts => account(instructions, slack, agent, details),
    /**
     * Adds up what the stand-ins saw, records the run's row, and checks that nothing was lost or
     * doubled and that at least `given` instructions were given.
     */
    tally(group: string, scenario: string, details: string[], given: number): Counts {
      const counts = account(instructions, slack, agent, details);
      recordRow(group, scenario, counts, details);
      expect(details, details.join('\n')).toEqual([]);
      expect(counts.lost).toBe(0);
      expect(counts.duplicates).toBe(0);
      expect(counts.given).toBeGreaterThanOrEqual(given);
      return counts;
    },
    async close() {
      for (const app of live()) app.kill();
      await Promise.all(processes.map((p) => p.exited));
      await db.end();
      await slack.close();
      await agent.close();
    },
  };
  return cluster;
}

export type Cluster = Awaited<ReturnType<typeof createCluster>>;
