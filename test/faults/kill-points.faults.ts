import { describe, expect, it } from 'vitest';
import type { AgentOperation } from '../helpers/agent-stand-in.js';
import { waitFor } from '../helpers/http.js';
import type { SlackCall } from '../helpers/slack-stand-in.js';
import { accountNotifications, add, type Counts, emptyCounts } from './ledger.js';
import { recordRow } from './report.js';
import { createWorld, DIRECT, killOnce } from './world.js';

/** Runs per kill point; 12 points make 72 SIGKILLs. */
const RUNS_PER_POINT = 6;

type Hit = {
  slack?: (c: SlackCall) => boolean;
  agent?: (op: AgentOperation) => boolean;
  afterAnswer: boolean;
};
const isRootPost = (c: SlackCall) =>
  c.method === 'chat.postMessage' &&
  (c.args.metadata as { event_type?: string } | undefined)?.event_type === 'docs_agent_root';
const isOutcomePost = (c: SlackCall) =>
  c.method === 'chat.postMessage' &&
  (c.args.metadata as { event_payload?: { kind?: string } } | undefined)?.event_payload?.kind === 'outcome';
const isNotification = (direct: boolean) => (c: SlackCall) =>
  c.method === 'chat.postMessage' &&
  (c.args.metadata as { event_type?: string } | undefined)?.event_type === 'docs_agent_notification' &&
  String(c.args.channel).startsWith('D') === direct;
/** Every outcome is also told in the notification channel and to the requester by DM. */
const NOTIFY_ENV = { NOTIFY_CHANNEL_ID: 'C0NEWS', NOTIFY_ON: 'all', NOTIFY_REQUESTER: 'dm' };

/** Where the process is killed, and how many matching moments a run has (the kill picks one). */
const POINTS: { name: string; hit?: Hit; occurrences: number }[] = [
  { name: 'after ack', occurrences: 1 },
  { name: 'after root post', hit: { slack: isRootPost, afterAnswer: true }, occurrences: 1 },
  { name: 'during create', hit: { agent: (op) => op === 'create', afterAnswer: false }, occurrences: 1 },
  {
    name: 'after create, before store write',
    hit: { agent: (op) => op === 'create', afterAnswer: true },
    occurrences: 1,
  },
  { name: 'during poll', hit: { agent: (op) => op === 'get', afterAnswer: false }, occurrences: 3 },
  { name: 'during follow-up', hit: { agent: (op) => op === 'message', afterAnswer: false }, occurrences: 1 },
  {
    name: 'after follow-up, before store write',
    hit: { agent: (op) => op === 'message', afterAnswer: true },
    occurrences: 1,
  },
  {
    name: 'between outcome write and Slack post',
    hit: { slack: isOutcomePost, afterAnswer: false },
    occurrences: 2,
  },
  {
    name: 'after Slack post, before marked delivered',
    hit: { slack: isOutcomePost, afterAnswer: true },
    occurrences: 2,
  },
  {
    name: 'between outcome write and channel notification',
    hit: { slack: isNotification(false), afterAnswer: false },
    occurrences: 2,
  },
  {
    name: 'after channel notification, before marked delivered',
    hit: { slack: isNotification(false), afterAnswer: true },
    occurrences: 2,
  },
  {
    name: 'after DM to the requester, before marked delivered',
    hit: { slack: isNotification(true), afterAnswer: true },
    occurrences: 2,
  },
];

let runSerial = 0;

/** Where the first instruction is given: a `/docs-agent` command, or a direct message to the bot. */
type Surface = 'command' | 'direct';

async function killRun(
  point: (typeof POINTS)[number],
  variant: number,
  details: string[],
  surface: Surface = 'command',
): Promise<Counts> {
  const kill = killOnce(() => world.app, { nth: 1 + (variant % point.occurrences) });
  const world = await createWorld({
    env: NOTIFY_ENV,
    slackHooks: {
      before: (c) => (point.hit?.slack?.(c) && !point.hit.afterAnswer && kill.hit() ? 'drop' : undefined),
      after: (c) => void (point.hit?.slack?.(c) && point.hit.afterAnswer && kill.hit()),
    },
    agentHooks: {
      before: (op) => (point.hit?.agent?.(op) && !point.hit.afterAnswer && kill.hit() ? 'drop' : undefined),
      after: (op) => void (point.hit?.agent?.(op) && point.hit.afterAnswer && kill.hit()),
    },
  });
  try {
    await world.start();
    const run = ++runSerial;
    const first = `Document feature ${run} first`;
    const second = `Document feature ${run} second`;
    const ins = surface === 'command' ? await world.command(first) : await world.direct(first);
    // Replies go where the job's thread is: under the card, or in the direct message.
    const reply = (threadTs: string) =>
      surface === 'command'
        ? world.reply(threadTs, second)
        : world.reply(threadTs, second, 'U0ALICE', 4, DIRECT);
    if (point.name === 'after ack' && ins.acked) kill.hit();

    const t0 = Date.now();
    const mark = (what: string) =>
      process.env.FAULT_TRACE && console.log(`${point.name} #${variant} ${what} +${Date.now() - t0}ms`);
    // Before a kill: wait for the first outcome, then reply in the thread.
    let replied = false;
    const firstOutcome = () =>
      world.slack.messages.some(
        (m) =>
          m.thread_ts && (m.metadata?.event_payload as { kind?: string } | undefined)?.kind === 'outcome',
      );
    // An outcome, or a notice that the first instruction's fate is unknown.
    const firstAnswer = () =>
      world.slack.messages.some((m) => m.thread_ts && m.metadata?.event_type === 'docs_agent_post');
    await waitFor('first outcome or kill', () => kill.killed || firstOutcome(), 10_000);
    const root = world.threadOf(ins);
    if (!kill.killed && root) {
      await reply(root);
      replied = true;
    }
    await waitFor('kill or quiet', () => kill.killed || world.isSettled(), 15_000);

    mark('first phase done');
    if (kill.killed) {
      await world.app.exited;
      if (world.app.child.signalCode !== 'SIGKILL')
        details.push(`${point.name} #${variant}: the app was not killed (${world.app.child.signalCode})`);
      await world.start();
      await world.redeliver();
    }
    // A command recorded before the kill is carried on after the restart: its root may come now.
    const rootAfter = await waitFor('root after restart', () => world.threadOf(ins), 5_000).catch(
      () => undefined,
    );
    if (!replied && rootAfter) {
      // Give the reply once the job has an outcome, as a person would.
      await waitFor('first answer after restart', firstAnswer, 10_000);
      await reply(rootAfter);
    }
    mark('before settle');
    await world.settle();
    mark('settled');
    expect(await world.app.stop()).toBe(0);
    mark('stopped');
    if (!kill.killed) details.push(`${point.name} #${variant}: the kill point was not reached`);
    const counts = world.account(details);
    const told = accountNotifications(world.slack, details);
    return { ...counts, lost: counts.lost + told.lost, duplicates: counts.duplicates + told.duplicates };
  } finally {
    await world.close();
  }
}

describe('SIGKILL at every step, then a restart', () => {
  for (const point of POINTS) {
    it(`${point.name}: nothing lost, nothing doubled`, async () => {
      let total = emptyCounts();
      const details: string[] = [];
      for (let variant = 0; variant < RUNS_PER_POINT; variant++)
        total = add(total, await killRun(point, variant, details));
      recordRow('SIGKILL and restart', point.name, total, details);
      expect(details, details.join('\n')).toEqual([]);
      expect(total.lost).toBe(0);
      expect(total.duplicates).toBe(0);
      expect(total.given).toBe(RUNS_PER_POINT * 2);
    });
  }
});

/** Kill points where a direct message's job is recorded, created, and its outcome is in flight. */
const DIRECT_POINTS = [
  'after ack',
  'after root post',
  'between outcome write and Slack post',
  'after Slack post, before marked delivered',
];
const DIRECT_RUNS = 2;

describe('SIGKILL with a job started by direct message, then a restart', () => {
  for (const point of POINTS.filter((p) => DIRECT_POINTS.includes(p.name))) {
    it(`direct message, ${point.name}: nothing lost, nothing doubled`, async () => {
      let total = emptyCounts();
      const details: string[] = [];
      for (let variant = 0; variant < DIRECT_RUNS; variant++)
        total = add(total, await killRun(point, variant, details, 'direct'));
      recordRow('SIGKILL and restart, direct messages', point.name, total, details);
      expect(details, details.join('\n')).toEqual([]);
      expect(total.lost).toBe(0);
      expect(total.duplicates).toBe(0);
      expect(total.given).toBe(DIRECT_RUNS * 2);
    });
  }
});
