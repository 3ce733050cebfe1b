import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { refusalText } from '../../src/blocks/messages.js';
import { stepRefusalText } from '../../src/blocks/step-texts.js';
import { triggerKeys } from '../../src/domain/keys.js';
import { stepAnswer, stepExecutionOf, stepFailure } from '../../src/jobs/workflow-steps.js';
import { mrkdwnToPlain } from '../../src/slack/mrkdwn.js';
import { jobRecord } from '../helpers/job-record.js';
import { createJobWorld, type JobWorld } from '../helpers/job-world.js';

const EXECUTION = 'Fx0TESTEXEC1';
const stepJob = (fields: Parameters<typeof jobRecord>[0] = {}) =>
  jobRecord({
    id: 41,
    origin: 'workflow',
    triggerKey: triggerKeys.step(EXECUTION),
    channelId: 'C0DOCS',
    ...fields,
  });

describe('stepExecutionOf', () => {
  it('reads the execution id back from a step’s job', () => {
    expect(stepExecutionOf(stepJob())).toBe(EXECUTION);
  });

  it('names none for a job no step started, whatever its key looks like', () => {
    expect(stepExecutionOf(stepJob({ origin: 'command' }))).toBeUndefined();
    expect(
      stepExecutionOf(jobRecord({ origin: 'command', triggerKey: `step:${EXECUTION}` })),
    ).toBeUndefined();
    expect(stepExecutionOf(stepJob({ triggerKey: triggerKeys.command('trigger-1') }))).toBeUndefined();
  });
});

describe('stepAnswer', () => {
  it('answers a step success with the job and its thread once the agent has it', () => {
    expect(stepAnswer(stepJob(), { threadTs: '1700000000.000900' })).toEqual([
      {
        jobId: 41,
        dedupeKey: `step:${EXECUTION}`,
        payload: {
          type: 'complete_step',
          executionId: EXECUTION,
          result: { job: 41, channel: 'C0DOCS', threadTs: '1700000000.000900' },
        },
      },
    ]);
  });

  it('answers a step failure in words for the workflow’s builder: plain, third person, no emoji', () => {
    const job = stepJob({ requesterId: 'W0GRIDUSER' });
    const [answer] = stepAnswer(job, { refused: { reason: 'guest' } });
    expect(answer).toEqual({
      jobId: 41,
      dedupeKey: `step:${EXECUTION}`,
      payload: {
        type: 'complete_step',
        executionId: EXECUTION,
        result: {
          error: stepRefusalText({ reason: 'guest' }, { userId: 'W0GRIDUSER', channelId: 'C0DOCS' }),
        },
      },
    });
    const error = String((answer?.payload as { result?: { error?: string } } | undefined)?.result?.error);
    expect(error.startsWith('@W0GRIDUSER may not instruct the docs agent in #C0DOCS: guest accounts')).toBe(
      true,
    );
    // The requester's chat words are for the requester: not what the builder reads.
    expect(error).not.toContain(mrkdwnToPlain(refusalText({ reason: 'guest' })).trim());
    expect(error).not.toMatch(/:[a-z_]+:/);
  });

  it('answers nothing for a job no step started', () => {
    const job = stepJob({
      origin: 'mention',
      triggerKey: triggerKeys.mention('C0DOCS', '1700000000.000100'),
    });
    expect(stepAnswer(job, { threadTs: '1700000000.000900' })).toEqual([]);
    expect(stepAnswer(job, { refused: { reason: 'user' } })).toEqual([]);
  });
});

describe('stepFailure', () => {
  it('answers a step whose job could not be recorded, with no job', () => {
    expect(stepFailure(EXECUTION, null, ' Could not record \n')).toEqual({
      jobId: null,
      dedupeKey: `step:${EXECUTION}`,
      payload: { type: 'complete_step', executionId: EXECUTION, result: { error: 'Could not record' } },
    });
  });
});

describe('one answer per step execution', () => {
  let w: JobWorld;
  beforeEach(() => {
    w = createJobWorld();
  });
  afterEach(async () => {
    await w.store.close();
  });

  it('queues only the first answer: a failure and a later success share the execution’s key', async () => {
    const { job } = await w.insertJob({ origin: 'workflow', triggerKey: triggerKeys.step(EXECUTION) });
    await w.ctx.enqueue(stepAnswer(job, { refused: { reason: 'restarted_before_post' } }), w.clock.at);
    await w.ctx.enqueue(stepAnswer(job, { threadTs: '1700000000.000900' }), w.clock.at);
    await w.ctx.enqueue([stepFailure(EXECUTION, job.id, 'Again')], w.clock.at);
    const queued = w.outbox();
    expect(queued).toHaveLength(1);
    expect(queued[0]?.payload).toEqual({
      type: 'complete_step',
      executionId: EXECUTION,
      result: {
        error: stepRefusalText(
          { reason: 'restarted_before_post' },
          { userId: job.requesterId, channelId: job.channelId },
        ),
      },
    });
  });
});
