import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { stepText } from '../../../src/blocks/step-texts.js';
import { WAIT_STEP_CALLBACK_ID, waitJobStep } from '../../../src/listeners/functions/wait-job-step.js';
import { mrkdwnToPlain } from '../../../src/slack/mrkdwn.js';
import { boltEventArgs, createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';
import { functionExecuted } from '../../helpers/workflow-steps.js';

type Args = Parameters<ReturnType<typeof waitJobStep>>[0];

let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld();
});
afterEach(() => w.stop());

let executions = 0;
/** Calls the listener with `function_executed` for "Wait for a docs agent job", as Slack sends it. */
async function waitStep(inputs: Record<string, unknown>) {
  const executionId = `Fx0WAIT${++executions}`;
  const event = functionExecuted({
    callbackId: WAIT_STEP_CALLBACK_ID,
    executionId,
    inputs,
    token: 'xwfp-test-not-a-real-token',
  });
  await waitJobStep(w.deps)(boltEventArgs<Args>(event));
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

  it('a store failure is passed on, so Slack delivers the event again', async () => {
    vi.spyOn(w.deps.jobs, 'awaitStep').mockRejectedValueOnce(new Error('disk I/O error'));
    await expect(waitStep({ job_id: 3 })).rejects.toThrow('disk I/O error');
  });
});
