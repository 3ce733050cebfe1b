import { describe, expect, it } from 'vitest';
import type { AgentStandInOptions } from '../helpers/agent-stand-in.js';
import { waitFor } from '../helpers/http.js';
import type { StoredMessage } from '../helpers/slack-stand-in.js';
import { add, emptyCounts } from './ledger.js';
import { recordRow } from './report.js';
import { createWorld, type World } from './world.js';

/** Runs of each scenario: enough to show it is not luck, few enough for CI. */
const RUNS = 2;
let serial = 0;

interface Scenario {
  name: string;
  /** Faults armed after start, before the command. */
  arm(world: World): void;
  agent?: AgentStandInOptions;
  /** Configuration for the app process beyond the suite's. */
  env?: Record<string, string>;
  /**
   * Instead of the usual command, wait, reply flow. `hit(done, what)` notes whether the fault the
   * flow injects (a kill, a re-delivery, a reply while something waits) did happen.
   */
  flow?: (world: World, first: string, second: string, hit: Hit) => Promise<void>;
}

type Hit = (done: boolean, what: string) => void;

const jsonError = (status: number, headers: Record<string, string> = {}) => ({
  status,
  headers,
  body: JSON.stringify({ error: `injected ${status}` }),
});
const isThreadPost = (args: Record<string, unknown>) => Boolean(args.thread_ts);

/** The usual flow: a command, its first answer in the thread, then a reply. */
async function usualFlow(world: World, first: string, second: string): Promise<void> {
  await world.command(first);
  // A root message, or a private answer that no job was started.
  await waitFor(
    'root or private answer',
    () => world.rootOf(first) || world.slack.responses.length > 0,
    10_000,
  );
  const root = world.rootOf(first);
  if (!root) return;
  const inThread = (m: StoredMessage) => (m.thread_ts ?? m.metadata?.event_payload.thread) === root.ts;
  await waitFor(
    'first answer',
    () => world.slack.messages.some((m) => inThread(m) && m.metadata?.event_type === 'docs_agent_post'),
    15_000,
  );
  await world.reply(root.ts, second);
}

/** A command, and its first answer in the thread; returns the thread's root. */
async function firstAnswered(world: World, first: string): Promise<StoredMessage> {
  await world.command(first);
  const root = await waitFor('root', () => world.rootOf(first), 10_000);
  await waitFor(
    'first answer',
    () =>
      world.slack.messages.some(
        (m) => m.thread_ts === root.ts && m.metadata?.event_type === 'docs_agent_post',
      ),
    15_000,
  );
  return root;
}

/** Kills the app with SIGKILL and starts it again on the same store. */
async function killAndRestart(world: World, hit: Hit): Promise<void> {
  world.app.kill();
  await world.app.exited;
  hit(world.app.child.signalCode === 'SIGKILL', 'the app was killed');
  await world.start();
}

/** Whether the agent has `text` (alone, or as one paragraph of a batch). */
const agentHas = (world: World, text: string) =>
  [...world.agent.jobs.values()].some((j) =>
    j.prompts.some((p) => p === text || p.split('\n\n').includes(text)),
  );

const AGENT: Scenario[] = [
  {
    name: '5xx burst while polling',
    arm: (w) => w.agent.fail('get', jsonError(500), jsonError(502), jsonError(503), jsonError(500)),
  },
  { name: '500 on create (outcome unknown)', arm: (w) => w.agent.fail('create', jsonError(500)) },
  { name: '503 on create (retried)', arm: (w) => w.agent.fail('create', jsonError(503), jsonError(503)) },
  { name: '5xx on follow-up', arm: (w) => w.agent.fail('message', jsonError(502)) },
  { name: 'time-out on create', arm: (w) => w.agent.fail('create', { delayMs: 1_300 }) },
  { name: 'time-out while polling', arm: (w) => w.agent.fail('get', { delayMs: 1_300 }, { delayMs: 1_300 }) },
  {
    name: 'connection closed while polling',
    arm: (w) => w.agent.fail('get', { hangUp: true }, { hangUp: true }),
  },
  {
    name: '429 with Retry-After on create',
    arm: (w) =>
      w.agent.fail('create', {
        status: 429,
        headers: { 'retry-after': '3600' },
        body: '{"error":"Rate limit"}',
      }),
  },
  {
    name: '429 with a short Retry-After on create (retried)',
    arm: (w) => w.agent.fail('create', { status: 429, headers: { 'retry-after': '1' } }),
  },
  {
    name: '429 without Retry-After, plain text, on follow-up',
    arm: (w) => w.agent.fail('message', { status: 429, body: 'Too Many Requests' }),
  },
  {
    name: 'plain-text 502 while polling',
    arm: (w) =>
      w.agent.fail('get', {
        status: 502,
        headers: { 'content-type': 'text/html' },
        body: '<html>Bad gateway</html>',
      }),
  },
  {
    name: 'malformed JSON while polling',
    arm: (w) => w.agent.fail('get', { status: 200, body: '{"id": "job_1", "status": ' }),
  },
  { name: 'malformed JSON on create', arm: (w) => w.agent.fail('create', { status: 201, body: 'not json' }) },
  {
    name: 'unknown status and extra fields',
    arm: (w) =>
      w.agent.fail('get', {
        status: 200,
        body: JSON.stringify({ id: 'job_1', status: 'queued', queuePosition: 2, region: 'eu' }),
      }),
  },
  { name: '404: the job vanished', arm: (w) => w.agent.fail('get', jsonError(404)) },
];

const SLACK: Scenario[] = [
  {
    name: '429 with Retry-After on chat.postMessage',
    arm: (w) => w.slack.fail('chat.postMessage', { status: 429, retryAfter: 1 }),
  },
  {
    name: 'not_in_channel on the root post',
    arm: (w) => w.slack.fail('chat.postMessage', { error: 'not_in_channel' }),
  },
  {
    name: 'channel_not_found on the root post',
    arm: (w) => w.slack.fail('chat.postMessage', { error: 'channel_not_found' }),
  },
  {
    name: 'is_archived on an outcome post',
    arm: (w) => w.slack.failIf('chat.postMessage', isThreadPost, { error: 'is_archived' }),
  },
  {
    name: 'msg_too_long on an outcome post',
    arm: (w) => w.slack.failIf('chat.postMessage', isThreadPost, { error: 'msg_too_long' }),
  },
  {
    name: '500s from Slack on thread posts',
    arm: (w) => w.slack.failIf('chat.postMessage', isThreadPost, { status: 500 }, 3),
  },
  {
    name: 'slow Slack answers',
    arm: (w) => w.slack.fail('chat.postMessage', { delayMs: 1_500 }, { delayMs: 1_500 }),
  },
  {
    name: 'event re-delivered 3 times',
    arm: () => {},
    flow: async (w, first, second, hit) => {
      await usualFlow(w, first, second);
      const reply = w.instructions.at(-1);
      hit(reply?.kind === 'reply', 'a reply was given');
      for (let retry = 1; retry <= 3 && reply?.kind === 'reply'; retry++)
        hit(await w.resend(reply, retry), `re-delivery ${retry} was acknowledged`);
    },
  },
  {
    name: 'replies waiting for their batch window when the app is killed',
    arm: () => {},
    env: { FOLLOW_UP_BATCH_MS: '1500' },
    flow: async (w, first, second, hit) => {
      const root = await firstAnswered(w, first);
      const replies = [
        await w.reply(root.ts, second),
        await w.reply(root.ts, `${second}, continued`, 'U0CARL'),
      ];
      // Both are recorded and waiting for the window: the process dies before sending them.
      hit(
        replies.every((r) => r.acked && !agentHas(w, r.prompt)),
        'both replies recorded and still waiting at the kill',
      );
      await killAndRestart(w, hit);
    },
  },
  {
    name: 'reply edited in its batch window, then the app is killed',
    arm: () => {},
    env: { FOLLOW_UP_BATCH_MS: '1500' },
    flow: async (w, first, second, hit) => {
      const root = await firstAnswered(w, first);
      const reply = await w.reply(root.ts, second);
      await w.edit(reply, `${second}, edited`, false);
      hit(
        reply.acked && (reply.earlier ?? []).length === 1 && !agentHas(w, second),
        'the edit was acknowledged while the reply still waited',
      );
      await killAndRestart(w, hit);
    },
  },
  {
    name: 'reply deleted in its batch window, then the app is killed',
    arm: () => {},
    env: { FOLLOW_UP_BATCH_MS: '1500' },
    flow: async (w, first, second, hit) => {
      const root = await firstAnswered(w, first);
      const reply = await w.reply(root.ts, second);
      await w.reply(root.ts, `${second}, kept`, 'U0CARL');
      await w.delete(reply);
      hit(
        reply.withdrawn === true && !agentHas(w, second),
        'the deletion was acknowledged while the reply still waited',
      );
      await killAndRestart(w, hit);
    },
  },
  {
    name: 'edit after the agent had the reply, re-delivered 3 times across a restart',
    arm: () => {},
    flow: async (w, first, second, hit) => {
      const root = await firstAnswered(w, first);
      const reply = await w.reply(root.ts, second);
      await waitFor(
        'reply sent',
        () => [...w.agent.jobs.values()].some((j) => j.prompts.includes(second)),
        10_000,
      );
      const edit = await w.edit(reply, `${second}, edited late`, true);
      hit(edit.acked, 'the late edit was acknowledged');
      await killAndRestart(w, hit);
      for (let retry = 1; retry <= 3; retry++)
        hit(await w.resend(edit, retry), `re-delivery ${retry} of the edit was acknowledged`);
    },
  },
  {
    name: 'reply arrives before the create call answered',
    arm: (w) => w.agent.fail('create', { delayMs: 600 }),
    flow: async (w, first, second, hit) => {
      await w.command(first);
      const root = await waitFor('root', () => w.rootOf(first), 10_000);
      const reply = await w.reply(root.ts, second);
      hit(reply.acked && w.agent.jobs.size === 0, 'the reply was acknowledged before the job was created');
    },
  },
];

async function runScenario(scenario: Scenario, details: string[]) {
  const world = await createWorld({
    ...(scenario.agent ? { agent: scenario.agent } : {}),
    ...(scenario.env ? { env: scenario.env } : {}),
  });
  try {
    await world.start();
    scenario.arm(world);
    const armed = world.agent.pendingFaults() + world.slack.pendingFaults();
    const n = ++serial;
    const hit: Hit = (done, what) => {
      if (!done) details.push(`${scenario.name} #${n}: the fault did not happen: ${what}`);
    };
    await (scenario.flow ?? usualFlow)(world, `Explain topic ${n} first`, `Explain topic ${n} second`, hit);
    await world.settle(20_000);
    // Every fault armed was served to the app (none left waiting in a stand-in's queue).
    const unserved = world.agent.pendingFaults() + world.slack.pendingFaults();
    hit(unserved === 0, `${unserved} of ${armed} armed faults never served`);
    hit(armed > 0 || scenario.flow !== undefined, 'a fault was armed');
    return world.account(details);
  } finally {
    await world.close();
  }
}

function suite(group: string, scenarios: Scenario[]) {
  describe(group, () => {
    for (const scenario of scenarios) {
      it(`${scenario.name}: nothing lost, nothing doubled`, async () => {
        const details: string[] = [];
        const rows = [];
        for (let i = 0; i < RUNS; i++) rows.push(await runScenario(scenario, details));
        const total = rows.reduce(add, emptyCounts());
        recordRow(group, scenario.name, total, details);
        expect(details, details.join('\n')).toEqual([]);
        expect(total.lost).toBe(0);
        expect(total.duplicates).toBe(0);
        expect(total.given).toBeGreaterThan(0);
      });
    }
  });
}

suite('Agent API faults', AGENT);
suite('Slack faults', SLACK);
