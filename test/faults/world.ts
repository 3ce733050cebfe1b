import { type AgentHooks, type AgentStandInOptions, startAgentStandIn } from '../helpers/agent-stand-in.js';
import { tempDatabase, testEnv } from '../helpers/harness.js';
import { sleep, waitFor } from '../helpers/http.js';
import {
  eventEnvelope,
  interaction,
  messageChanged,
  messageDeleted,
  messageEvent,
  slashCommand,
} from '../helpers/payloads.js';
import { type SlackHooks, startSlackStandIn } from '../helpers/slack-stand-in.js';
import { type AppProcess, launch, sendTo, settled } from './app-process.js';
import { account, type Counts, type Instruction } from './ledger.js';

let serial = 0;

/** The direct message between Alice and the bot. */
export const DIRECT = 'D0ALICE';

/**
 * One scenario run: fresh stand-ins and store, the built app as a child process, and a record
 * of every instruction given, so the run can be added up at the end.
 */
export async function createWorld(
  options: {
    slackHooks?: SlackHooks;
    agentHooks?: AgentHooks;
    agent?: AgentStandInOptions;
    env?: Record<string, string>;
  } = {},
) {
  const slack = await startSlackStandIn({
    hooks: { before: (c) => options.slackHooks?.before?.(c), after: (c) => options.slackHooks?.after?.(c) },
  });
  const agent = await startAgentStandIn({
    finishAfterGets: 2,
    ...options.agent,
    hooks: {
      before: (op, b) => options.agentHooks?.before?.(op, b),
      after: (op, b) => options.agentHooks?.after?.(op, b),
    },
  });
  const databasePath = tempDatabase();
  const env = testEnv(slack, agent, databasePath, {
    POLL_INTERVAL_MS: '30',
    POLL_MAX_INTERVAL_MS: '200',
    LOG_LEVEL: 'info',
    DOCS_AGENT_API_TIMEOUT_MS: '1000',
    ...options.env,
  });
  const instructions: Instruction[] = [];
  let app: AppProcess | undefined;
  const bodies = new Map<Instruction, string>();

  const world = {
    slack,
    agent,
    instructions,
    /** The store file, for a read-only look at what was (not yet) written. */
    databasePath,
    get app() {
      if (!app) throw new Error('app not started');
      return app;
    },
    async start() {
      app = await launch(env);
      return app;
    },
    /** Gives `/docs-agent <prompt>`; resolves whether Slack got its acknowledgement. */
    async command(prompt: string, user = 'U0ALICE'): Promise<Instruction> {
      const responseId = `r${++serial}`;
      const ins: Instruction = { prompt, kind: 'command', user, acked: false, responseId };
      instructions.push(ins);
      const body = slashCommand({ text: prompt, user_id: user, response_url: slack.responseUrl(responseId) });
      ins.acked = await send(body, 'application/x-www-form-urlencoded');
      return ins;
    },
    /**
     * Replies in a thread, as Slack delivers an event: retried (same event id, up to 3 times)
     * until it is acknowledged, across restarts if need be. In {@link DIRECT}, a reply in a
     * direct message thread.
     */
    async reply(
      threadTs: string,
      prompt: string,
      user = 'U0BOB',
      attempts = 4,
      channel = 'C0GENERAL',
    ): Promise<Instruction> {
      const messageTs = `17100000${String(++serial).padStart(2, '0')}.000100`;
      const ins: Instruction = { prompt, kind: 'reply', user, acked: false, threadTs, messageTs, channel };
      return deliver(ins, `EvF${serial}`, attempts);
    },
    /** Sends the bot `prompt` as a direct message (a new job whose thread is the message). */
    async direct(prompt: string, user = 'U0ALICE', attempts = 4): Promise<Instruction> {
      const messageTs = `17200000${String(++serial).padStart(2, '0')}.000100`;
      const ins: Instruction = { prompt, kind: 'direct', user, acked: false, messageTs, channel: DIRECT };
      return deliver(ins, `EvD${serial}`, attempts);
    },
    /**
     * Edits a reply, as Slack delivers the edit (retried until acknowledged). While the reply
     * waits, the edit replaces it (`late: false`: the earlier text must never reach the agent);
     * after the agent has it (`late: true`), its author must be told once.
     */
    async edit(reply: Instruction, text: string, late: boolean): Promise<Instruction> {
      const event = messageChanged({
        channel: 'C0GENERAL',
        ts: reply.messageTs ?? '',
        thread_ts: reply.threadTs ?? '',
        user: reply.user,
        text,
        previous: reply.prompt,
      });
      const body = eventEnvelope(event, { event_id: `EvE${++serial}` });
      const ins: Instruction = late ? { ...reply, kind: 'edit', prompt: text, acked: false } : reply;
      if (late) instructions.push(ins);
      const acked = await deliverEvent(body);
      if (late) {
        ins.acked = acked;
        bodies.set(ins, body);
      } else if (acked) {
        reply.earlier = [...(reply.earlier ?? []), reply.prompt];
        reply.prompt = text;
      }
      return ins;
    },
    /** Deletes a waiting reply, as Slack delivers the deletion: it must never reach the agent. */
    async delete(reply: Instruction): Promise<void> {
      const event = messageDeleted({
        channel: 'C0GENERAL',
        ts: reply.messageTs ?? '',
        thread_ts: reply.threadTs ?? '',
        user: reply.user,
      });
      if (await deliverEvent(eventEnvelope(event, { event_id: `EvX${++serial}` }))) reply.withdrawn = true;
    },
    /** Delivers a reply's event again, exactly as Slack retries it. */
    async resend(ins: Instruction, retryNum: number): Promise<boolean> {
      const body = bodies.get(ins);
      if (!body) throw new Error('not a reply given through this world');
      return send(body, 'application/json', {
        'x-slack-retry-num': String(retryNum),
        'x-slack-retry-reason': 'http_timeout',
      });
    },
    /** Sends an interactivity payload (a button click); resolves whether Slack got its acknowledgement. */
    click: (payload: Record<string, unknown>): Promise<boolean> =>
      send(interaction(payload), 'application/x-www-form-urlencoded'),
    /** Retries the messages Slack never got an acknowledgement for (Slack redelivers them). */
    async redeliver() {
      for (const ins of instructions.filter((i) => i.kind !== 'command' && !i.acked)) {
        const body = eventOf(ins, `EvR${ins.messageTs}`);
        ins.acked = await send(body, 'application/json', { 'x-slack-retry-num': '1' });
      }
    },
    rootOf: (prompt: string) => slack.messages.find((m) => !m.thread_ts && m.text.includes(prompt)),
    /** The thread of an instruction that started a job, once its status card is posted. */
    threadOf(ins: Instruction): string | undefined {
      if (ins.kind === 'command') return world.rootOf(ins.prompt)?.ts;
      const card = slack.messages.find(
        (m) => m.thread_ts === ins.messageTs && m.metadata?.event_type === 'docs_agent_root',
      );
      return card ? ins.messageTs : undefined;
    },
    /** Waits until the store shows nothing left to do (jobs it knows of have ended, messages went out). */
    async settle(timeoutMs = 15_000) {
      await waitFor('everything settled', () => settled(databasePath), timeoutMs);
    },
    isSettled: () => settled(databasePath),
    account: (details: string[]): Counts => account(instructions, slack, agent, details),
    async close() {
      app?.kill();
      await app?.exited;
      await slack.close();
      await agent.close();
    },
  };

  const send = (body: string, contentType: string, headers: Record<string, string> = {}) =>
    sendTo(app, body, contentType, headers);
  /** Delivers an event as Slack does: retried (same event id, up to 3 times) until acknowledged. */
  async function deliverEvent(body: string): Promise<boolean> {
    for (let i = 0; i < 4; i++) {
      if (await send(body, 'application/json', i ? { 'x-slack-retry-num': String(i) } : {})) return true;
      await sleep(50);
    }
    return false;
  }

  /** A message event as Slack sends it for a reply or a direct message. */
  function eventOf(ins: Instruction, eventId: string): string {
    const channel = ins.channel ?? 'C0GENERAL';
    return messageEvent(
      {
        channel,
        ...(ins.threadTs ? { thread_ts: ins.threadTs } : {}),
        ...(channel === DIRECT ? { channel_type: 'im' } : {}),
        ts: ins.messageTs,
        user: ins.user,
        text: ins.prompt,
      },
      { event_id: eventId },
    );
  }

  /** Delivers a message event until it is acknowledged, as Slack retries it. */
  async function deliver(ins: Instruction, eventId: string, attempts: number): Promise<Instruction> {
    instructions.push(ins);
    const body = eventOf(ins, eventId);
    bodies.set(ins, body);
    for (let i = 0; i < attempts && !ins.acked; i++) {
      ins.acked = await send(body, 'application/json', i ? { 'x-slack-retry-num': String(i) } : {});
      if (!ins.acked) await sleep(50);
    }
    return ins;
  }

  return world;
}

export type World = Awaited<ReturnType<typeof createWorld>>;

/**
 * A SIGKILL that fires once, at the `nth` hit of its kill point (the first by default). Hits
 * count only once it is armed (at once by default, else from {@link KillOnce.arm}), so a run can
 * leave what comes before the moment under test undisturbed.
 */
export function killOnce(app: () => AppProcess, options: { nth?: number; armed?: boolean } = {}) {
  const nth = options.nth ?? 1;
  let armed = options.armed ?? true;
  let seen = 0;
  let killed = false;
  return {
    /** Whether the app was killed. */
    get killed() {
      return killed;
    },
    arm() {
      armed = true;
    },
    /** A hit of the kill point: kills the app if it is the one; true when it did. */
    hit(): boolean {
      if (!armed || killed || ++seen < nth) return false;
      killed = true;
      app().kill();
      return true;
    },
  };
}

export type KillOnce = ReturnType<typeof killOnce>;
