import { WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { refusalText, stepRefusalText } from '../../src/blocks/refusal-texts.js';
import type { StepCompletion, StepWait } from '../../src/delivery/kinds/workflow-step.js';
import { triggerKeys } from '../../src/domain/keys.js';
import {
  createWorkflowSteps,
  stepAnswer,
  stepExecutionOf,
  stepFailure,
} from '../../src/jobs/workflow-steps.js';
import { createLogger, createRedactor } from '../../src/logging/logger.js';
import { createSlackCaller } from '../../src/slack/caller.js';
import { WAIT_LIMIT_MS } from '../../src/slack/function-steps.js';
import { mrkdwnToPlain } from '../../src/slack/mrkdwn.js';
import type { OutboxItem } from '../../src/store/types.js';
import { createYieldGate } from '../../src/util/yield-gate.js';
import { sleep } from '../helpers/http.js';
import { jobRecord } from '../helpers/job-record.js';
import { createJobWorld, type JobWorld } from '../helpers/job-world.js';
import { BOT_TOKEN, type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';

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

const POLL_MS = 7_000;
const STEP_TOKEN = 'xwfp-1-test-step-token';

const item = (payload: StepCompletion | StepWait) =>
  ({ id: 9, jobId: 4, attempts: 1, payload }) as unknown as OutboxItem<StepCompletion | StepWait>;

describe('the app’s Workflow Builder answers', () => {
  let slack: SlackStandIn | undefined;
  afterEach(async () => {
    await slack?.close();
    slack = undefined;
  });

  async function steps() {
    slack = await startSlackStandIn();
    const gate = createYieldGate();
    const logger = createLogger({ level: 'error', secrets: [], write: () => undefined });
    const built = createWorkflowSteps({
      caller: createSlackCaller({
        client: new WebClient(BOT_TOKEN, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } }),
        logger,
        redact: createRedactor(['not-a-real-secret']),
      }),
      store: { getJob: async (id) => (id === 4 ? jobRecord({ id: 4, origin: 'workflow' }) : undefined) },
      identity: {
        get: async () => ({
          teamId: 'T0TEST',
          botUserId: 'U0BOT',
          botId: 'B0BOT',
          url: 'https://acme.slack.com/',
        }),
      },
      logger,
      gate,
      config: { poll: { intervalMs: POLL_MS }, prLinkHosts: ['github.com'] },
    });
    return { ...built, gate, slack };
  }

  it('answer a started step with the execution’s own token the completer kept, linking the thread', async () => {
    const { completer, sender, slack } = await steps();
    slack.steps.functionTokens.set(STEP_TOKEN, 'Fx1');
    completer.remember('Fx1', STEP_TOKEN, Date.now());
    const payload: StepCompletion = {
      type: 'complete_step',
      executionId: 'Fx1',
      result: { job: 4, channel: 'C0DOCS', threadTs: '1700000000.000100' },
    };
    expect(await sender.send(item(payload))).toBeUndefined();
    expect(slack.steps.completions).toEqual([
      {
        method: 'functions.completeSuccess',
        executionId: 'Fx1',
        token: 'function',
        outputs: {
          job_id: 4,
          channel_id: 'C0DOCS',
          thread_ts: '1700000000.000100',
          thread_link: 'https://acme.slack.com/archives/C0DOCS/p1700000000000100',
        },
      },
    ]);
  });

  it('hold a step’s answer back while Slack’s requests are in flight, and mask secrets in a reason', async () => {
    const { sender, gate, slack } = await steps();
    const payload: StepCompletion = {
      type: 'complete_step',
      executionId: 'Fx2',
      result: { error: 'the agent API said: key not-a-real-secret refused' },
    };
    gate.requestStarted();
    let answered = false;
    const sending = sender.send(item(payload)).then(() => {
      answered = true;
    });
    // Well inside the gate's hold of a burst (a second): long enough for an unheld answer to arrive.
    await sleep(60);
    expect(answered).toBe(false);
    expect(slack.steps.completions).toEqual([]);
    gate.requestEnded();
    await sending;
    expect(slack.steps.completions).toEqual([
      {
        method: 'functions.completeError',
        executionId: 'Fx2',
        token: 'bot',
        error: 'the agent API said: key [redacted] refused',
      },
    ]);
  });

  it('look at a waited-for job again after one poll interval while it works', async () => {
    const { sender, slack } = await steps();
    const deadline = Date.now() + WAIT_LIMIT_MS;
    const payload: StepWait = { type: 'await_job', executionId: 'Fx3', job: 4, deadline };
    const before = Date.now();
    const delivery = await sender.send(item(payload));
    const laterAt = (delivery as { laterAt: number }).laterAt;
    expect(laterAt).toBeGreaterThanOrEqual(before + POLL_MS);
    expect(laterAt).toBeLessThanOrEqual(Date.now() + POLL_MS);
    expect(slack.steps.completions).toEqual([]);
  });
});
