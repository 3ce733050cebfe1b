import { describe, expect, it } from 'vitest';
import { START_STEP_CALLBACK_ID, WAIT_STEP_CALLBACK_ID } from '../../src/features/workflow-steps/listener.js';
import { waitFor } from '../helpers/http.js';
import { eventEnvelope } from '../helpers/payloads.js';
import type { SlackCall } from '../helpers/slack-stand-in.js';
import { functionExecuted, userContext } from '../helpers/workflow-steps.js';
import { sendTo } from './app-process.js';
import { createWorld, killOnce } from './world.js';

/** Looks like a step execution's token, and is fake. */
const STEP_TOKEN = 'xwfp-0000000000-fault-step-token';

const isRootPost = (c: SlackCall) =>
  c.method === 'chat.postMessage' &&
  (c.args.metadata as { event_type?: string } | undefined)?.event_type === 'docs_agent_root';
const isAnswer = (c: SlackCall) => c.method.startsWith('functions.complete');

/**
 * Where the process is killed: the step is recorded (acknowledged) by then, and not yet answered.
 * At a Slack call, the kill comes before Slack has it (`before`), once Slack has it but before the
 * app hears back (`unheard`: the stand-in goes on and keeps it, so the kill cannot land after the
 * app moved on, however loaded the machine), or once the app has Slack's answer (`after`).
 */
const POINTS: {
  name: string;
  slack?: (c: SlackCall) => boolean;
  create?: true;
  at: 'before' | 'unheard' | 'after';
}[] = [
  { name: 'recorded, before the status card', slack: isRootPost, at: 'before' },
  { name: 'after the status card, before the create call', slack: isRootPost, at: 'unheard' },
  { name: 'after the create call, before it is recorded', create: true, at: 'after' },
  { name: 'answer queued, before Slack has it', slack: isAnswer, at: 'before' },
  { name: 'Slack has the answer, before it is marked delivered', slack: isAnswer, at: 'after' },
];

let serial = 0;

describe('SIGKILL while a Workflow Builder step starts a job, then a restart', () => {
  for (const point of POINTS) {
    it(`${point.name}: the step is answered exactly once`, async () => {
      const kill = killOnce(() => world.app);
      const world = await createWorld({
        slackHooks: {
          before: (c) => {
            if (!point.slack?.(c) || point.at === 'after' || !kill.hit()) return undefined;
            return point.at === 'before' ? 'drop' : undefined;
          },
          after: (c) => void (point.slack?.(c) && point.at === 'after' && kill.hit()),
        },
        agentHooks: { after: (op) => void (point.create && op === 'create' && kill.hit()) },
      });
      try {
        await world.start();
        const executionId = `Fx0FAULT${++serial}`;
        world.slack.steps.functionTokens.set(STEP_TOKEN, executionId);
        const event = functionExecuted({
          callbackId: START_STEP_CALLBACK_ID,
          executionId,
          inputs: {
            instruction: `Check the changelog ${serial}`,
            channel_id: 'C0GENERAL',
            user_context: userContext('U0ALICE'),
          },
          token: STEP_TOKEN,
        });
        const body = eventEnvelope(event, { event_id: `Ev${executionId}` });
        // Recorded before Slack has its answer: the kill points all come after this.
        expect(await sendTo(world.app, body, 'application/json')).toBe(true);
        await waitFor('the kill', () => kill.killed, 10_000);
        await world.app.exited;
        await world.start();
        // Slack delivers the event again when an answer was lost; here it had one, but a
        // re-delivery must change nothing either way.
        await sendTo(world.app, body, 'application/json', { 'x-slack-retry-num': '1' });
        await world.settle();
        const answers = world.slack.steps.completionsOf(executionId);
        expect(answers, JSON.stringify(answers)).toHaveLength(1);
        expect(world.agent.requestsFor('create').length).toBeLessThanOrEqual(1);
        // One status card; and the answer sent once, or twice only when the first one's
        // delivery was cut off after Slack had it (Slack then refuses the second).
        expect(world.slack.messages.filter((m) => m.metadata?.event_type === 'docs_agent_root')).toHaveLength(
          1,
        );
        const sent = world.slack.calls.filter(isAnswer).length;
        expect(sent).toBe(point.slack === isAnswer && point.at === 'after' ? 2 : 1);
        if (point.create) {
          // Nobody can say whether a create call cut off before it was recorded reached the
          // agent: the step fails with the words the thread gives, rather than guess.
          expect(answers[0]?.method).toBe('functions.completeError');
          expect(answers[0]?.error).toContain('cannot tell whether the docs agent received it');
        } else {
          expect(answers[0]?.method).toBe('functions.completeSuccess');
          expect(answers[0]?.outputs?.job_id).toBe(1);
        }
        expect(await world.app.stop()).toBe(0);
      } finally {
        await world.close();
      }
    });
  }
});

describe('SIGKILL while a "Wait for a docs agent job" step waits, then a restart', () => {
  it('answers the step once, when the job ends', async () => {
    // The job works until the test completes it.
    const world = await createWorld({ agent: { finishAfterGets: 1_000_000 } });
    try {
      await world.start();
      const step = (callbackId: string, executionId: string, inputs: Record<string, unknown>) => {
        world.slack.steps.functionTokens.set(STEP_TOKEN, executionId);
        const event = functionExecuted({ callbackId, executionId, inputs, token: STEP_TOKEN });
        return eventEnvelope(event, { event_id: `Ev${executionId}` });
      };
      const start = step(START_STEP_CALLBACK_ID, 'Fx0START', {
        instruction: 'Check the changelog',
        channel_id: 'C0GENERAL',
        user_context: userContext('U0ALICE'),
      });
      expect(await sendTo(world.app, start, 'application/json')).toBe(true);
      const started = await waitFor('the job', () => world.slack.steps.completionsOf('Fx0START')[0], 10_000);
      const wait = step(WAIT_STEP_CALLBACK_ID, 'Fx0WAIT', { job_id: started.outputs?.job_id });
      expect(await sendTo(world.app, wait, 'application/json')).toBe(true);
      world.app.kill();
      await world.app.exited;
      // Slack had its acknowledgement: it does not deliver the event again.
      await world.start();
      world.agent.complete('job_1', 'https://github.com/acme/docs/pull/9');
      await world.settle();
      const answers = world.slack.steps.completionsOf('Fx0WAIT');
      expect(answers, JSON.stringify(answers)).toHaveLength(1);
      expect(answers[0]?.outputs).toMatchObject({ status: 'completed_pr' });
      // The execution's token died with the process: the answer went with the bot token.
      expect(answers[0]?.token).toBe('bot');
      expect(await world.app.stop()).toBe(0);
    } finally {
      await world.close();
    }
  });
});
