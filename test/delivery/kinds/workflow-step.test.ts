import { describe, expect, it } from 'vitest';
import {
  createStepSender,
  type StepWait,
  stepCompletion,
  stepWait,
  waitOutputs,
} from '../../../src/delivery/kinds/workflow-step.js';
import { createSender } from '../../../src/delivery/outbox-registry.js';
import { createLogger } from '../../../src/logging/logger.js';
import { SlackCallError } from '../../../src/slack/caller.js';
import { type StepResult, WAIT_LIMIT_MS } from '../../../src/slack/function-steps.js';
import { checkUrl } from '../../../src/slack/links.js';
import type { JobRecord, OutboxItem, RunOutcome } from '../../../src/store/types.js';
import { useDeliveryWorld } from '../../helpers/delivery-world.js';
import { jobRecord } from '../../helpers/job-record.js';

const START = 1_700_000_000_000;

/** A sender whose clock, job and Slack answer the test sets; the answers it gave and its logs are kept. */
function world(job: JobRecord, slackError?: SlackCallError, workspaceUrl = 'https://acme.slack.com/') {
  let at = START;
  const answers: { executionId: string; result: StepResult }[] = [];
  const logs: string[] = [];
  const sender = createStepSender({
    store: { getJob: async (id) => (id === job.id ? job : undefined) },
    steps: {
      complete: async (executionId, result) => {
        if (slackError) throw slackError;
        answers.push({ executionId, result });
      },
    },
    workspaceUrl: async () => workspaceUrl,
    logger: createLogger({ level: 'info', secrets: [], write: (line) => logs.push(line) }),
    checkEveryMs: 10_000,
    hints: { prLinkHosts: ['github.com', 'gitlab.example.com'] },
    now: () => at,
  });
  const wait: StepWait = {
    type: 'await_job',
    executionId: 'Fx1',
    job: job.id,
    deadline: START + WAIT_LIMIT_MS,
  };
  const item = (attempts: number) =>
    ({ id: 5, jobId: null, attempts, payload: wait }) as unknown as OutboxItem<StepWait>;
  return {
    answers,
    logs,
    sender,
    send: (attempts = 1) => sender.send(item(attempts)),
    advance: (ms: number) => {
      at += ms;
    },
  };
}

const workflowJob = (fields: Partial<JobRecord> = {}) =>
  jobRecord({ id: 3, origin: 'workflow', triggerKey: 'step:Fx0', ...fields });

describe('a "Wait for a docs agent job" step', () => {
  it('looks again later while the job works, never past its deadline', async () => {
    const w = world(workflowJob());
    expect(await w.send()).toEqual({ laterAt: START + 10_000 });
    w.advance(WAIT_LIMIT_MS - 4_000);
    expect(await w.send()).toEqual({ laterAt: START + WAIT_LIMIT_MS });
    expect(w.answers).toEqual([]);
  });

  it('fails with a reason at its deadline, before Slack ends the step', async () => {
    const w = world(workflowJob());
    w.advance(WAIT_LIMIT_MS);
    expect(await w.send()).toBeUndefined();
    expect(w.answers).toHaveLength(1);
    const result = w.answers[0]?.result;
    expect(result && 'error' in result && result.error).toContain('still working after 14 minutes');
    expect(result && 'error' in result && result.error).toContain('https://acme.slack.com/archives/C0DOCS/');
  });

  it('keeps the pull request out of the outputs of a job in a private channel, and says so', async () => {
    const w = world(
      workflowJob({
        phase: 'idle',
        lastOutcome: 'completed_pr',
        prLink: 'https://github.com/acme/docs/pull/1',
        privacy: 'private',
      }),
    );
    await w.send();
    expect(w.answers[0]?.result).toEqual({
      outputs: {
        job_id: 3,
        status: 'completed_pr',
        summary: expect.stringContaining('pull request link is not passed on'),
        thread_link: 'https://acme.slack.com/archives/C0DOCS/p1700000000000100',
      },
    });
  });

  it.each([
    ['off PR_LINK_HOSTS', 'https://evil.example/o/r/pull/1'],
    ['holding Slack syntax', 'https://github.com/acme/docs/pull/7|<!channel> <@U0123ABCD>'],
    ['not https', 'http://github.com/acme/docs/pull/7'],
    ['not a pull request', 'https://github.com/login/oauth/authorize'],
    ['with a password', 'https://me:secret@github.com/acme/docs/pull/7'],
  ])('withholds a pull request address %s, and its summary says so', async (_what, prLink) => {
    const w = world(workflowJob({ phase: 'idle', lastOutcome: 'completed_pr', prLink, privacy: 'public' }));
    await w.send();
    const result = w.answers[0]?.result;
    const outputs = result && 'outputs' in result ? result.outputs : {};
    expect(outputs).not.toHaveProperty('pull_request_link');
    expect(outputs.status).toBe('completed_pr');
    expect(outputs.summary).toContain('pull request link was withheld');
    expect(JSON.stringify(outputs)).not.toContain(prLink.slice(8, 20));
  });

  it.each([
    'https://github.com/acme/docs/pull/7',
    'https://gitlab.example.com/group/docs/-/merge_requests/12',
  ])('passes on a pull request the thread would link: %s', async (prLink) => {
    const w = world(workflowJob({ phase: 'idle', lastOutcome: 'completed_pr', prLink, privacy: 'public' }));
    await w.send();
    expect(w.answers[0]?.result).toEqual({
      outputs: {
        job_id: 3,
        status: 'completed_pr',
        summary: 'The docs agent finished and opened a pull request.',
        thread_link: 'https://acme.slack.com/archives/C0DOCS/p1700000000000100',
        pull_request_link: prLink,
      },
    });
  });

  it('hands on no thread link the thread itself would not show as a link', async () => {
    const ended = workflowJob({ phase: 'idle', lastOutcome: 'completed_no_changes' });
    const w = world(ended, undefined, 'https://acme.slack.com/<!channel>/');
    await w.send();
    expect(w.answers[0]?.result).toEqual({
      outputs: {
        job_id: 3,
        status: 'completed_no_changes',
        summary: 'The docs agent finished without changing any files, so no pull request was opened.',
      },
    });
  });

  it('counts an execution Slack already closed as answered on a later attempt, and gives up on a first', async () => {
    const closed = new SlackCallError('functions.completeSuccess', 'execution_not_in_running_state', {
      platform: true,
    });
    const ended = workflowJob({ phase: 'idle', lastOutcome: 'completed_no_changes' });
    expect(await world(ended, closed).send(2)).toBeUndefined();
    expect(await world(ended, closed).send(1)).toBe('execution_closed');
  });

  it.each([
    ['access_denied', 'access_denied'],
    ['an error no retry can fix', 'invalid_arguments'],
  ])(
    'gives the answer up at once when Slack answers %s, logged once with the execution',
    async (_what, code) => {
      const refused = new SlackCallError('functions.completeSuccess', code, { platform: true });
      const w = world(workflowJob({ phase: 'idle', lastOutcome: 'completed_no_changes' }), refused);
      expect(await w.send(1)).toBe(code);
      const warned = w.logs.filter((l) => l.includes('given up'));
      expect(warned).toHaveLength(1);
      expect(JSON.parse(warned[0] as string)).toMatchObject({ level: 'warn', executionId: 'Fx1', code });
    },
  );

  it('passes an error a retry may fix on to the outbox', async () => {
    const outage = new SlackCallError('functions.completeSuccess', 'http_503');
    const w = world(workflowJob({ phase: 'idle', lastOutcome: 'completed_no_changes' }), outage);
    await expect(w.send(1)).rejects.toBe(outage);
    expect(w.logs).toEqual([]);
  });
});

describe('a Workflow Builder step item', () => {
  const delivery = useDeliveryWorld();
  const claimCovers = async () => true;

  it('answers a step once per execution, under the key earlier releases wrote', () => {
    expect(stepCompletion('Fx0123ABC', 7, { job: 7, channel: 'C0DOCS', threadTs: '1.2' })).toEqual({
      jobId: 7,
      dedupeKey: 'step:Fx0123ABC',
      payload: {
        type: 'complete_step',
        executionId: 'Fx0123ABC',
        result: { job: 7, channel: 'C0DOCS', threadTs: '1.2' },
      },
    });
    expect(stepCompletion('Fx0123ABD', null, { error: 'Not allowed here' }).payload.result).toEqual({
      error: 'Not allowed here',
    });
    expect(stepWait('Fx0123ABE', 7, START)).toEqual({
      jobId: null,
      dedupeKey: 'step-wait:Fx0123ABE',
      payload: { type: 'await_job', executionId: 'Fx0123ABE', job: 7, deadline: START },
    });
  });

  it('is handed to the step sender, and given up without one', async () => {
    const w = delivery;
    const stepItems: unknown[] = [];
    const send = createSender(
      w.sendDeps({
        steps: {
          send: async (item) => {
            stepItems.push(item.payload);
            return { laterAt: w.clock.at + 10_000 };
          },
        },
      }),
    ).send;
    const item = await w.claimed(stepWait('Fx1', 7, w.clock.at + 60_000));
    expect(await send(item, claimCovers)).toEqual({ laterAt: w.clock.at + 10_000 });
    expect(stepItems).toEqual([item.payload]);
    const without = createSender(w.sendDeps()).send;
    expect(await without(item, claimCovers)).toBe('no_workflow_steps');
  });
});

const HOSTS = { prLinkHosts: ['github.com'] };
const THREAD = checkUrl('https://acme.slack.com/archives/C0DOCS/p1700000000000100');

const ended = (fields: Partial<JobRecord>) =>
  jobRecord({ id: 3, origin: 'workflow', phase: 'idle', privacy: 'public', ...fields });

describe('waitOutputs', () => {
  it('passes on a public job’s pull request the thread would link, with its thread', () => {
    const prLink = 'https://github.com/acme/docs/pull/7';
    expect(waitOutputs(ended({ lastOutcome: 'completed_pr', prLink }), THREAD, HOSTS)).toEqual({
      job_id: 3,
      status: 'completed_pr',
      summary: 'The docs agent finished and opened a pull request.',
      thread_link: THREAD,
      pull_request_link: prLink,
    });
  });

  it.each([
    'https://evil.example/o/r/pull/1',
    'https://github.com/acme/docs/pull/7 <!channel> <@U0123ABCD>',
    'https://github.com/acme/docs/pull/7>|<!here>',
    'https://github.com.evil.example/acme/docs/pull/7',
    'https://github.com/acme/docs/settings',
    'javascript:alert(1)//github.com/acme/docs/pull/7',
  ])('withholds %s and says so in the summary', (prLink) => {
    const outputs = waitOutputs(ended({ lastOutcome: 'completed_pr', prLink }), THREAD, HOSTS);
    expect(outputs).not.toHaveProperty('pull_request_link');
    expect(outputs.summary).toBe(
      "The docs agent finished and opened a pull request. Its pull request link was withheld: the address is not a pull request on a host this docs agent trusts (PR_LINK_HOSTS). The job's thread shows it as text.",
    );
    expect(Object.values(outputs).join(' ')).not.toMatch(/[<>|]/);
  });

  it('passes no pull request on from a job that is not public, and says where it is', () => {
    for (const privacy of ['private', 'direct', 'pane', 'unknown'] as const) {
      const job = ended({
        lastOutcome: 'completed_pr',
        prLink: 'https://github.com/acme/docs/pull/7',
        privacy,
      });
      const outputs = waitOutputs(job, THREAD, HOSTS);
      expect(outputs).not.toHaveProperty('pull_request_link');
      expect(outputs.summary).toContain(
        "pull request link is not passed on, because the job's channel is not public",
      );
    }
  });

  it.each<[RunOutcome, string]>([
    [
      'completed_no_changes',
      'The docs agent finished without changing any files, so no pull request was opened.',
    ],
    ['failed', 'The docs agent job failed; the agent API does not say why.'],
    ['archived', 'The docs agent job was archived, so it will not continue.'],
    ['gone', 'The agent API no longer knows the docs agent job.'],
    [
      'stopped_watching',
      'The docs agent stopped watching the job: it was still running after its time limit.',
    ],
  ])('sums up %s in a sentence without emoji codes', (outcome, summary) => {
    expect(waitOutputs(ended({ lastOutcome: outcome }), undefined, HOSTS)).toEqual({
      job_id: 3,
      status: outcome,
      summary,
    });
  });

  it('gives the job’s phase as its status when it has no outcome', () => {
    expect(waitOutputs(ended({ lastOutcome: null }), undefined, HOSTS)).toMatchObject({
      status: 'idle',
      summary: "The docs agent job's run ended.",
    });
  });
});
