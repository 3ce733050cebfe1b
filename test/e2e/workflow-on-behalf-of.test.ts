import { describe, expect, it } from 'vitest';
import { stepRefusalText } from '../../src/blocks/refusal-texts.js';
import { START_STEP_CALLBACK_ID } from '../../src/features/workflow-steps/listener.js';
import { stepText } from '../../src/features/workflow-steps/wording.js';
import { useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { functionExecuted, userContext } from '../helpers/workflow-steps.js';

/** The operator lets workflows start jobs for one service person, e.g. for scheduled runs. */
const h = useHarness({ WORKFLOW_ON_BEHALF_OF_USER_IDS: 'U0SERVICE' });

const STEP_TOKEN = 'xwfp-0000000000-test-behalf-token';
let executions = 0;

/** Slack running "Start a docs agent job", as a signed Events API request. */
async function runStep(inputs: Record<string, unknown>) {
  const executionId = `Fx0BEHALF${++executions}`;
  h.slack.steps.functionTokens.set(STEP_TOKEN, executionId);
  const res = await h.anyEvent(
    functionExecuted({ callbackId: START_STEP_CALLBACK_ID, executionId, inputs, token: STEP_TOKEN }),
  );
  expect(res.status).toBe(200);
  return waitFor('the step answered', () => h.slack.steps.completionsOf(executionId)[0]);
}

const step = { instruction: 'Compare the changelog with last week’s releases', channel_id: 'C0DOCS' };

describe('"On behalf of" with WORKFLOW_ON_BEHALF_OF_USER_IDS', () => {
  it('starts the job for the person listed, and the card and the job list say a workflow started it', async () => {
    const answer = await runStep({ ...step, user_id: 'U0SERVICE' });
    expect(answer.method).toBe('functions.completeSuccess');
    const job = await h.app.store.getJob(Number(answer.outputs?.job_id));
    expect(job).toMatchObject({ origin: 'workflow', requesterId: 'U0SERVICE', phase: 'active' });
    expect(h.agent.requestsFor('create')).toHaveLength(1);
    const card = h.slack.messages.find((m) => m.channel === 'C0DOCS' && m.ts === answer.outputs?.thread_ts);
    expect(card?.text).toContain(':memo: Started by a workflow for <@U0SERVICE>:');
    expect(JSON.stringify(card?.blocks)).toContain('Started by a workflow for <@U0SERVICE>');

    const list = (await (await h.command({ text: 'list', user_id: 'U0SERVICE' })).json()) as { text: string };
    expect(list.text).toContain('started by a workflow for <@U0SERVICE>');
  });

  it('never lets a person who used a workflow act as the person listed: the job would be theirs', async () => {
    // A member outside the allow-lists, or a guest, would otherwise pass as the service person
    // and spend its hourly limits.
    const answer = await runStep({ ...step, user_context: userContext('U0ALICE'), user_id: 'U0SERVICE' });
    expect(answer.method).toBe('functions.completeError');
    expect(answer.error).toBe(stepText.onBehalfOfWithPerson('U0SERVICE', 'U0ALICE'));
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);
    expect(await h.app.store.recentJobs({ requesterId: 'U0SERVICE' }, 5)).toEqual([]);
  });

  it('refuses a person it does not list, naming the setting, and starts nothing', async () => {
    const answer = await runStep({ ...step, user_id: 'U0BOB' });
    expect(answer.method).toBe('functions.completeError');
    expect(answer.error).toBe(stepText.onBehalfOfRefused('U0BOB', true));
    expect(answer.error).toContain('WORKFLOW_ON_BEHALF_OF_USER_IDS lists them, which does not list @U0BOB');
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);
  });

  it('holds the person named to every rule: a listed guest is still refused', async () => {
    h.slack.guests.add('U0SERVICE');
    const answer = await runStep({ ...step, user_id: 'U0SERVICE' });
    expect(answer.error).toBe(
      stepRefusalText({ reason: 'guest' }, { userId: 'U0SERVICE', channelId: 'C0DOCS' }),
    );
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);
  });
});
