import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WAIT_STEP_CALLBACK_ID, waitJobStep } from '../../../src/features/workflow-steps/wait-job-step.js';
import { stepText } from '../../../src/features/workflow-steps/wording.js';
import { STEP_TOKEN_MS, WAIT_LIMIT_MS } from '../../../src/slack/function-steps.js';
import { mrkdwnToPlain } from '../../../src/slack/mrkdwn.js';
import { boltEventArgs, createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';
import { functionExecuted } from '../../helpers/workflow-steps.js';

type Args = Parameters<ReturnType<typeof waitJobStep>>[0];

let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld();
});
afterEach(() => {
  vi.useRealTimers();
  return w.stop();
});

let executions = 0;
/** Calls the listener with `function_executed` for "Wait for a docs agent job", as Slack sends it. */
async function waitStep(inputs: Record<string, unknown>, fields: Record<string, unknown> = {}) {
  const executionId = `Fx0WAIT${++executions}`;
  const event = {
    ...functionExecuted({
      callbackId: WAIT_STEP_CALLBACK_ID,
      executionId,
      inputs,
      token: 'xwfp-test-not-a-real-token',
    }),
    ...fields,
  };
  // The step's deadline is read against the job world's clock (the app's is `Date.now`).
  await waitJobStep({ ...w.deps, now: w.ctx.now })(boltEventArgs<Args>(event));
  return executionId;
}

describe('"Wait for a docs agent job"', () => {
  it('is recorded at once as waiting for the job, until Slack’s time limit is near', async () => {
    const { job } = await w.insertJob();
    const executionId = await waitStep({ job_id: job.id });
    const [wait] = w.outbox();
    expect(wait?.payload).toMatchObject({ type: 'await_job', executionId, job: job.id });
    expect((wait?.payload as { deadline?: number } | undefined)?.deadline).toBeGreaterThan(w.clock.at);
  });

  it('takes the job id as Workflow Builder may pass it, as text', async () => {
    await waitStep({ job_id: '17' });
    expect(w.outbox()[0]?.payload).toMatchObject({ type: 'await_job', job: 17 });
  });

  it.each([
    ['no job id', {}],
    ['a job id that is not a number', { job_id: 'job_17' }],
    ['a job id of zero', { job_id: 0 }],
    ['a fractional job id', { job_id: 1.5 }],
  ])('with %s: the step fails with a reason, and the fields are logged', async (_what, inputs) => {
    const executionId = await waitStep(inputs);
    expect(w.outbox().map((r) => r.payload)).toEqual([
      {
        type: 'complete_step',
        executionId,
        result: { error: mrkdwnToPlain(stepText.notUnderstood()).trim() },
      },
    ]);
    expect(w.logged('warn', 'workflow step inputs not understood')).toHaveLength(1);
  });

  it('an event it cannot read records nothing', async () => {
    const event = { type: 'function_executed', inputs: { job_id: 1 } };
    await waitJobStep(w.deps)(boltEventArgs<Args>(event));
    expect(w.outbox()).toEqual([]);
    expect(w.logged('warn', 'workflow step event not understood')).toHaveLength(1);
  });

  describe('delivered late: its time counts from the step’s start (event_ts)', () => {
    /** The event arrives at RECEIVED_AT on the listener's clock, for a step started `lateMs` before. */
    const RECEIVED_AT = Date.parse('2026-09-01T12:30:00.000Z');
    const lateStep = (jobId: number, lateMs: number) => {
      vi.useFakeTimers({ now: RECEIVED_AT, toFake: ['Date'] });
      return waitStep({ job_id: jobId }, { event_ts: ((RECEIVED_AT - lateMs) / 1000).toFixed(6) });
    };
    const deadlineOf = (executionId: string) =>
      w
        .outbox()
        .map((r) => r.payload as { executionId?: string; deadline?: number })
        .find((p) => p.executionId === executionId)?.deadline;

    it('five minutes late: its deadline is 14 minutes from the start, 9 from now', async () => {
      const { job } = await w.insertJob();
      const executionId = await lateStep(job.id, 5 * 60_000);
      expect(deadlineOf(executionId)).toBe(w.clock.at + WAIT_LIMIT_MS - 5 * 60_000);
    });

    it('past its 14 minutes but inside Slack’s 15: recorded as due now, so it fails at once', async () => {
      const { job } = await w.insertJob();
      const executionId = await lateStep(job.id, WAIT_LIMIT_MS + 30_000);
      expect(deadlineOf(executionId)).toBe(w.clock.at - 30_000);
    });

    it('after Slack ended it: nothing recorded, logged with the execution and never the token', async () => {
      const { job } = await w.insertJob();
      const executionId = await lateStep(job.id, STEP_TOKEN_MS);
      expect(w.outbox()).toEqual([]);
      const logged = w.logged('warn', 'arrived after Slack ended it');
      expect(logged).toHaveLength(1);
      expect(JSON.parse(logged[0] as string)).toMatchObject({ executionId, startedMsAgo: STEP_TOKEN_MS });
      expect(logged[0]).not.toContain('xwfp-test-not-a-real-token');
    });

    it('stamped in the future: counted from its receipt', async () => {
      const { job } = await w.insertJob();
      const executionId = await lateStep(job.id, -10 * 60_000);
      expect(deadlineOf(executionId)).toBe(w.clock.at + WAIT_LIMIT_MS);
    });
  });

  it('a store failure is passed on, so Slack delivers the event again', async () => {
    vi.spyOn(w.deps.outbox, 'enqueue').mockRejectedValueOnce(new Error('disk I/O error'));
    await expect(waitStep({ job_id: 3 })).rejects.toThrow('disk I/O error');
  });
});
