import { describe, expect, it } from 'vitest';
import { START_STEP_CALLBACK_ID, WAIT_STEP_CALLBACK_ID } from '../../src/features/workflow-steps/listener.js';
import { WAIT_LIMIT_MS } from '../../src/slack/function-steps.js';
import { useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { eventEnvelope } from '../helpers/payloads.js';
import { postSigned } from '../helpers/signing.js';
import { outputProblems } from '../helpers/step-outputs.js';
import { functionExecuted, userContext } from '../helpers/workflow-steps.js';

const h = useHarness();

const STEP_TOKEN = 'xwfp-0000000000-test-wait-token';
let executions = 0;

/** Slack running one of the app's steps, as a signed Events API request. */
async function runStep(callbackId: string, inputs: Record<string, unknown>) {
  const executionId = `Fx0WAIT${++executions}`;
  h.slack.steps.functionTokens.set(STEP_TOKEN, executionId);
  const res = await h.anyEvent(functionExecuted({ callbackId, executionId, inputs, token: STEP_TOKEN }));
  expect(res.status).toBe(200);
  return executionId;
}

/**
 * Slack delivering a step's event again, `lateMs` after the step started: the event (its
 * `event_ts`) and the envelope's `event_time` are the first delivery's, the retry headers say
 * which delivery it is.
 */
async function runLateStep(callbackId: string, inputs: Record<string, unknown>, lateMs: number) {
  const executionId = `Fx0LATE${++executions}`;
  h.slack.steps.functionTokens.set(STEP_TOKEN, executionId);
  const startedAt = Date.now() - lateMs;
  const event = {
    ...functionExecuted({ callbackId, executionId, inputs, token: STEP_TOKEN }),
    event_ts: (startedAt / 1000).toFixed(6),
  };
  const envelope = { ...JSON.parse(eventEnvelope(event)), event_time: Math.floor(startedAt / 1000) };
  const res = await postSigned(h.base(), JSON.stringify(envelope), {
    contentType: 'application/json',
    headers: { 'x-slack-retry-num': '2', 'x-slack-retry-reason': 'http_error' },
  });
  expect(res.status).toBe(200);
  return { executionId, startedAt };
}

const answerOf = (executionId: string) =>
  waitFor('the step answered', () => h.slack.steps.completionsOf(executionId)[0]);

async function startedJob(): Promise<number> {
  const started = await runStep(START_STEP_CALLBACK_ID, {
    instruction: 'Check the changelog against last week’s releases',
    channel_id: 'C0DOCS',
    user_context: userContext('U0ALICE'),
  });
  const answer = await answerOf(started);
  return Number(answer.outputs?.job_id);
}

describe('the "Wait for a docs agent job" step', () => {
  it('completes with the outcome and the pull request once the job ends', async () => {
    const jobId = await startedJob();
    const waiting = await runStep(WAIT_STEP_CALLBACK_ID, { job_id: jobId });
    // Looked at again while the job works: not answered yet.
    await waitFor('a second look at the job', async () => {
      const item = (await h.app.store.dueOutbox(Date.now() + 60_000, 50)).find(
        (i) => i.payload.type === 'await_job',
      );
      return item && item.attempts >= 2;
    });
    expect(h.slack.steps.completionsOf(waiting)).toEqual([]);
    h.agent.complete('job_1', 'https://github.com/acme/docs/pull/7');
    const answer = await answerOf(waiting);
    expect(answer.method).toBe('functions.completeSuccess');
    expect(answer.outputs).toMatchObject({
      job_id: jobId,
      status: 'completed_pr',
      pull_request_link: 'https://github.com/acme/docs/pull/7',
    });
    expect(outputProblems(WAIT_STEP_CALLBACK_ID, answer.outputs ?? {})).toEqual([]);
  });

  it('fails for a job no workflow started', async () => {
    const started = await h.startJob();
    const job = await h.app.store.findJobByThread(started.channel, started.threadTs);
    const waiting = await runStep(WAIT_STEP_CALLBACK_ID, { job_id: job?.id });
    const answer = await answerOf(waiting);
    expect(answer.method).toBe('functions.completeError');
    expect(answer.error).toContain('No docs agent job with that id was started by a workflow');
  });

  it('fails for a job that never started, pointing at its thread', async () => {
    h.agent.fail('create', { status: 400, body: JSON.stringify({ error: 'Prompt not accepted' }) });
    const started = await runStep(START_STEP_CALLBACK_ID, {
      instruction: 'Check the changelog',
      channel_id: 'C0DOCS',
      user_context: userContext('U0ALICE'),
    });
    await answerOf(started);
    const job = (await h.app.store.recentJobs({ requesterId: 'U0ALICE' }, 1))[0];
    const answer = await answerOf(await runStep(WAIT_STEP_CALLBACK_ID, { job_id: job?.id }));
    expect(answer.error).toContain('did not start');
    expect(answer.error).toContain('https://test-team.slack.com/archives/C0DOCS/');
  });
});

describe('the "Wait for a docs agent job" step’s pull request link', () => {
  it.each([
    ['off PR_LINK_HOSTS', 'https://evil.example/o/r/pull/1'],
    ['holding Slack syntax', 'https://github.com/acme/docs/pull/7 <!channel> <@U123>'],
  ])('is withheld when the agent API gives one %s, and the summary says so', async (_what, prLink) => {
    const jobId = await startedJob();
    const waiting = await runStep(WAIT_STEP_CALLBACK_ID, { job_id: jobId });
    // A hostile or broken agent API: an address with spaces is outside its documented schema.
    Object.assign(h.agent.jobs.get('job_1') ?? {}, {
      status: 'completed',
      prLink,
      offSpec: /\s/.test(prLink),
    });
    const answer = await answerOf(waiting);
    expect(answer.method).toBe('functions.completeSuccess');
    expect(answer.outputs).not.toHaveProperty('pull_request_link');
    expect(answer.outputs).toMatchObject({
      job_id: jobId,
      status: 'completed_pr',
      summary: expect.stringContaining('Its pull request link was withheld'),
    });
    expect(JSON.stringify(answer.outputs)).not.toMatch(/evil\.example|<!channel>|<@U123>/);
    expect(outputProblems(WAIT_STEP_CALLBACK_ID, answer.outputs ?? {})).toEqual([]);
  });

  it('is passed on when the thread would link it', async () => {
    const jobId = await startedJob();
    const waiting = await runStep(WAIT_STEP_CALLBACK_ID, { job_id: jobId });
    h.agent.complete('job_1', 'https://github.com/acme/docs/pull/8');
    const answer = await answerOf(waiting);
    expect(answer.outputs).toMatchObject({
      pull_request_link: 'https://github.com/acme/docs/pull/8',
      summary: 'The docs agent finished and opened a pull request.',
    });
  });
});

describe('the "Wait for a docs agent job" step’s time, counted from its start', () => {
  it('delivered again five minutes late: its deadline is 14 minutes from the step’s start', async () => {
    const jobId = await startedJob();
    const { executionId, startedAt } = await runLateStep(
      WAIT_STEP_CALLBACK_ID,
      { job_id: jobId },
      5 * 60_000,
    );
    const wait = await waitFor('the wait recorded', async () =>
      (await h.app.store.dueOutbox(Date.now() + WAIT_LIMIT_MS, 50)).find(
        (i) => i.payload.type === 'await_job' && i.payload.executionId === executionId,
      ),
    );
    const deadline = wait.payload.type === 'await_job' ? wait.payload.deadline : 0;
    // Before Slack's own 15 minutes from the start, not 14 from the late delivery.
    expect(deadline).toBeGreaterThanOrEqual(startedAt + WAIT_LIMIT_MS);
    expect(deadline).toBeLessThan(startedAt + WAIT_LIMIT_MS + 5_000);
  });

  it('delivered past its 14 minutes: failed at once with the reason, while Slack still takes an answer', async () => {
    const jobId = await startedJob();
    const { executionId } = await runLateStep(
      WAIT_STEP_CALLBACK_ID,
      { job_id: jobId },
      WAIT_LIMIT_MS + 20_000,
    );
    const answer = await answerOf(executionId);
    expect(answer).toMatchObject({ method: 'functions.completeError', token: 'function' });
    expect(answer.error).toContain('still working after 14 minutes');
  });

  it('delivered after Slack ended it: logged, and nothing is recorded or answered', async () => {
    const jobId = await startedJob();
    const { executionId } = await runLateStep(WAIT_STEP_CALLBACK_ID, { job_id: jobId }, 16 * 60_000);
    const logged = await waitFor('the late step logged', () => {
      const lines = h.logs.filter((l) => l.includes('arrived after Slack ended it'));
      return lines.length > 0 ? lines : undefined;
    });
    await h.settled();
    expect(logged).toHaveLength(1);
    expect(JSON.parse(logged[0] as string)).toMatchObject({ level: 'warn', executionId });
    expect(logged[0]).not.toContain(STEP_TOKEN);
    expect(h.slack.steps.completionsOf(executionId)).toEqual([]);
    const waits = (await h.app.store.dueOutbox(Date.now() + WAIT_LIMIT_MS, 50)).filter(
      (i) => i.payload.type === 'await_job',
    );
    expect(waits).toEqual([]);
  });
});

describe('an answer Slack refuses for good', () => {
  it('access_denied: given up after one call, logged once with the execution and never the token', async () => {
    const jobId = await startedJob();
    const waiting = await runStep(WAIT_STEP_CALLBACK_ID, { job_id: jobId });
    const calls = () =>
      h.slack.callsTo('functions.completeSuccess').filter((c) => c.args.function_execution_id === waiting);
    h.slack.fail('functions.completeSuccess', { error: 'access_denied' });
    h.agent.complete('job_1', 'https://github.com/acme/docs/pull/7');
    const logged = await waitFor('the refusal logged', () => {
      const lines = h.logs.filter((l) => l.includes('answer for good'));
      return lines.length > 0 ? lines : undefined;
    });
    await h.settled();
    expect(calls()).toHaveLength(1);
    expect(h.slack.steps.completionsOf(waiting)).toEqual([]);
    expect(logged).toHaveLength(1);
    expect(JSON.parse(logged[0] as string)).toMatchObject({
      level: 'warn',
      executionId: waiting,
      code: 'access_denied',
    });
    expect(h.logs.join('\n')).not.toContain(STEP_TOKEN);
  });
});
