import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/http.js';
import { eventEnvelope } from '../helpers/payloads.js';
import type { SlackCall } from '../helpers/slack-stand-in.js';
import { sendTo } from './app-process.js';
import { add, emptyCounts } from './ledger.js';
import { recordRow } from './report.js';
import { createWorld, killOnce, type World } from './world.js';

/*
 * A job's agent session across SIGKILLs and re-deliveries: once everything settles, the
 * session shows what the job is (never `processing` for a job whose run ended), each status
 * reached Slack through the outbox, and a stop acts once however often it is delivered.
 */

const isSetStatus = (status?: string) => (c: SlackCall) =>
  c.method === 'agents.sessions.setStatus' && (status === undefined || c.args.status === status);

/** Where the process is killed: at a status call, before Slack answers it or just after. */
const POINTS: { name: string; hit: (c: SlackCall) => boolean; afterAnswer: boolean }[] = [
  { name: 'while setting processing', hit: isSetStatus('processing'), afterAnswer: false },
  { name: 'after processing was set', hit: isSetStatus('processing'), afterAnswer: true },
  { name: 'while setting active', hit: isSetStatus('active'), afterAnswer: false },
  { name: 'after active was set, before marked delivered', hit: isSetStatus('active'), afterAnswer: true },
];
const RUNS_PER_POINT = 3;

/** The thread's session once everything settled, with every status Slack was sent for it. */
function sessionAfter(world: World, threadTs: string) {
  return world.slack.sessionOf('C0GENERAL', threadTs);
}

describe('agent session status across SIGKILL and restart', () => {
  for (const point of POINTS) {
    it(`${point.name}: the session ends as the job does`, async () => {
      const details: string[] = [];
      let total = emptyCounts();
      let reached = 0;
      for (let variant = 0; variant < RUNS_PER_POINT; variant++) {
        const kill = killOnce(() => world.app);
        const world = await createWorld({
          slackHooks: {
            before: (c) => (point.hit(c) && !point.afterAnswer && kill.hit() ? 'drop' : undefined),
            after: (c) => void (point.hit(c) && point.afterAnswer && kill.hit()),
          },
        });
        try {
          await world.start();
          const ins = await world.command(`Document session feature ${point.name} ${variant}`);
          await waitFor('kill or quiet', () => kill.killed || world.isSettled(), 15_000);
          if (kill.killed) {
            reached++;
            await world.app.exited;
            await world.start();
          }
          await world.settle();
          expect(await world.app.stop()).toBe(0);
          const threadTs = world.threadOf(ins);
          const session = threadTs ? sessionAfter(world, threadTs) : undefined;
          if (session?.status !== 'active')
            details.push(`${point.name} #${variant}: session ${session?.status ?? 'missing'}, job idle`);
          total = add(total, world.account(details));
        } finally {
          await world.close();
        }
      }
      recordRow('Agent sessions: SIGKILL and restart', point.name, total, details);
      expect(details, details.join('\n')).toEqual([]);
      expect(total.lost).toBe(0);
      expect(total.duplicates).toBe(0);
      expect(reached).toBe(RUNS_PER_POINT);
    });
  }
});

/** `agent_session_stopped` as Slack sends it, with a fixed event id so a re-delivery is recognisable. */
const stopEvent = (threadTs: string, eventId: string) =>
  eventEnvelope(
    {
      type: 'agent_session_stopped',
      channel: 'C0GENERAL',
      user: 'U0ALICE',
      thread_ts: threadTs,
      streaming_message_ts: [],
      event_ts: '1783536983.783769',
    },
    { event_id: eventId },
  );

const isStopPost = (c: SlackCall) =>
  c.method === 'chat.postMessage' && String(c.args.text ?? '').includes('pressed stop');

describe('stop across SIGKILL and re-delivery', () => {
  for (const afterAnswer of [false, true]) {
    it(`killed ${afterAnswer ? 'after' : 'while'} the stop is said: said once, session not processing`, async () => {
      const kill = killOnce(() => world.app);
      const world: World = await createWorld({
        // The run lasts until the test ends it: the stop comes while the agent works.
        agent: { finishAfterGets: 1_000_000 },
        slackHooks: {
          before: (c) => (!afterAnswer && isStopPost(c) && kill.hit() ? 'drop' : undefined),
          after: (c) => void (afterAnswer && isStopPost(c) && kill.hit()),
        },
      });
      try {
        await world.start();
        const ins = await world.command('Document the stop button');
        const threadTs = await waitFor('thread', () => world.threadOf(ins), 10_000);
        await waitFor('processing', () => sessionAfter(world, threadTs)?.status === 'processing', 10_000);
        const body = stopEvent(threadTs, 'EvSTOPFAULT');
        await sendTo(world.app, body, 'application/json');
        await waitFor('killed', () => kill.killed, 10_000);
        await world.app.exited;
        await world.start();
        // Slack delivers the event again (its answer may have been lost with the process).
        await sendTo(world.app, body, 'application/json', { 'x-slack-retry-num': '1' });
        await waitFor(
          'session not processing',
          () => sessionAfter(world, threadTs)?.status === 'active',
          10_000,
        );
        // The run still ends, and its outcome is still posted.
        const agentJobId = [...world.agent.jobs.keys()][0] ?? '';
        world.agent.complete(agentJobId, 'https://github.com/example/docs/pull/9');
        await world.settle();
        expect(world.slack.threadPosts(threadTs).some((m) => m.text.includes('pull/9'))).toBe(true);
        const posts = world.slack.threadPosts(threadTs).filter((m) => m.text.includes('pressed stop'));
        expect(posts).toHaveLength(1);
        expect(sessionAfter(world, threadTs)?.status).toBe('active');
        expect(await world.app.stop()).toBe(0);
      } finally {
        await world.close();
      }
    });
  }
});
