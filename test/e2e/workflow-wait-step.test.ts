import { describe, expect, it } from 'vitest';
import { START_STEP_CALLBACK_ID } from '../../src/listeners/functions/start-job-step.js';
import { WAIT_STEP_CALLBACK_ID } from '../../src/listeners/functions/wait-job-step.js';
import { useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
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
