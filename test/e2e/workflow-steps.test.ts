import { describe, expect, it } from 'vitest';
import { refusalText, stepRefusalText } from '../../src/blocks/refusal-texts.js';
import { START_STEP_CALLBACK_ID } from '../../src/features/workflow-steps/listener.js';
import { stepText } from '../../src/features/workflow-steps/wording.js';
import { API_KEY } from '../helpers/agent-stand-in.js';
import { useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { eventEnvelope } from '../helpers/payloads.js';
import { postSigned } from '../helpers/signing.js';
import { outputProblems } from '../helpers/step-outputs.js';
import { functionExecuted, USER_CONTEXT_SECRET, userContext } from '../helpers/workflow-steps.js';

const h = useHarness({ MAX_PROMPT_CHARS: '200' });

/** Looks like a step execution's token, and is fake. */
const STEP_TOKEN = 'xwfp-0000000000-test-step-token';
let executions = 0;

/** Slack running the "Start a docs agent job" step, as a signed Events API request. */
async function runStep(inputs: Record<string, unknown>, executionId = `Fx0TEST${++executions}`) {
  h.slack.steps.functionTokens.set(STEP_TOKEN, executionId);
  const event = functionExecuted({
    callbackId: START_STEP_CALLBACK_ID,
    executionId,
    inputs,
    token: STEP_TOKEN,
  });
  const eventId = `Ev${executionId}`;
  const send = (retry?: number) =>
    postSigned(h.base(), eventEnvelope(event, { event_id: eventId }), {
      contentType: 'application/json',
      ...(retry
        ? { headers: { 'x-slack-retry-num': String(retry), 'x-slack-retry-reason': 'timeout' } }
        : {}),
    });
  const res = await send();
  return { executionId, res, redeliver: (retry = 1) => send(retry) };
}

/** As Slack runs the step for Alice, who used the workflow (a link, a button, a form). */
const defaults = {
  instruction: 'Document the new export API',
  channel_id: 'C0DOCS',
  user_context: userContext('U0ALICE'),
};
const IN_DOCS = { channelId: 'C0DOCS' };

const answerOf = (executionId: string) =>
  waitFor('the step answered', () => h.slack.steps.completionsOf(executionId)[0]);

describe('the "Start a docs agent job" step', () => {
  it('starts the job in the channel and completes with outputs of the manifest types', async () => {
    const { executionId, res } = await runStep(defaults);
    expect(res.status).toBe(200);
    const answer = await answerOf(executionId);
    expect(answer.method).toBe('functions.completeSuccess');
    // The execution's own token, as Slack's custom steps expect.
    expect(answer.token).toBe('function');
    expect(outputProblems(START_STEP_CALLBACK_ID, answer.outputs ?? {})).toEqual([]);
    expect(h.agent.requestsFor('create')).toHaveLength(1);
    const root = h.slack.messages.find((m) => m.channel === 'C0DOCS' && m.ts === answer.outputs?.thread_ts);
    expect(root?.text).toContain('Document the new export API');
    expect(answer.outputs?.thread_link).toBe(
      `https://test-team.slack.com/archives/C0DOCS/p${String(answer.outputs?.thread_ts).replace('.', '')}`,
    );
    const job = await h.app.store.getJob(Number(answer.outputs?.job_id));
    expect(job).toMatchObject({ origin: 'workflow', requesterId: 'U0ALICE', phase: 'active' });
  });

  it('replies under the message the workflow names', async () => {
    const { executionId } = await runStep({ ...defaults, thread_ts: '1700000000.000100' });
    const answer = await answerOf(executionId);
    expect(answer.outputs?.thread_ts).toBe('1700000000.000100');
    expect(h.slack.threadPosts('1700000000.000100').length).toBeGreaterThan(0);
  });

  it('is one job and one answer when Slack delivers the event again', async () => {
    const { executionId, redeliver } = await runStep(defaults);
    await redeliver(1);
    await answerOf(executionId);
    await redeliver(2);
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(1);
    expect(h.slack.steps.completionsOf(executionId)).toHaveLength(1);
    expect(h.slack.callsTo('functions.completeSuccess')).toHaveLength(1);
  });

  it('checks the person who used the workflow: a guest is refused, told privately, and nothing starts', async () => {
    h.slack.guests.add('U0GUEST');
    const { executionId } = await runStep({ ...defaults, user_context: userContext('U0GUEST') });
    const answer = await answerOf(executionId);
    expect(answer.method).toBe('functions.completeError');
    // The builder reads it in the workflow's activity: about the person, in the third person.
    expect(answer.error).toBe(stepRefusalText({ reason: 'guest' }, { userId: 'U0GUEST', ...IN_DOCS }));
    expect(answer.error).toContain('@U0GUEST may not instruct the docs agent in #C0DOCS: guest accounts');
    // The person is told in the chat's own words, privately in the step's channel.
    const note = await waitFor('the private note', () =>
      h.slack.callsTo('chat.postEphemeral').find((c) => c.args.user === 'U0GUEST'),
    );
    expect(note.args.text).toBe(refusalText({ reason: 'guest' }));
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);
  });

  it('fails the step when the instruction is too long, saying what to shorten', async () => {
    const { executionId } = await runStep({ ...defaults, instruction: 'x'.repeat(201) });
    const answer = await answerOf(executionId);
    expect(answer.error).toBe(
      stepRefusalText({ reason: 'too_long', length: 201, max: 200 }, { userId: 'U0ALICE', ...IN_DOCS }),
    );
    expect(h.agent.requestsFor('create')).toHaveLength(0);
  });

  it('fails the step when the agent API refuses the job it recorded', async () => {
    h.agent.fail('create', { status: 400, body: JSON.stringify({ error: 'Prompt not accepted' }) });
    const { executionId } = await runStep(defaults);
    const answer = await answerOf(executionId);
    expect(answer.method).toBe('functions.completeError');
    expect(answer.error).toContain('Prompt not accepted');
    const job = (await h.app.store.recentJobs({ requesterId: 'U0ALICE' }, 1))[0];
    expect(job?.phase).toBe('not_started');
    expect(answer.error).toContain("Change the step's instruction.");
    // The thread tells its requester in the chat's words.
    const post = await waitFor('the thread explains', () => h.slack.threadPosts(job?.threadTs ?? '')[0]);
    expect(post.text).toContain('<@U0ALICE>');
    expect(post.text).toContain('Prompt not accepted');
  });

  it('masks a secret the agent API echoes in its refusal', async () => {
    h.agent.fail('create', { status: 400, body: JSON.stringify({ error: `key ${API_KEY} not allowed` }) });
    const { executionId } = await runStep(defaults);
    const answer = await answerOf(executionId);
    expect(answer.error).toContain('not allowed');
    expect(answer.error).not.toContain(API_KEY);
  });

  it('fails the step when the bot cannot post in the channel', async () => {
    h.slack.fail('chat.postMessage', { error: 'not_in_channel' });
    const { executionId } = await runStep(defaults);
    const answer = await answerOf(executionId);
    expect(answer.error).toBe(
      stepRefusalText({ reason: 'not_in_channel' }, { userId: 'U0ALICE', ...IN_DOCS }),
    );
  });

  it('fails at once, recording nothing, when the instruction is empty or the project unknown', async () => {
    const empty = await runStep({ ...defaults, instruction: '  ' });
    const unknown = await runStep({ ...defaults, project: 'proj_elsewhere' });
    expect((await answerOf(empty.executionId)).error).toBe(stepText.noInstruction());
    expect((await answerOf(unknown.executionId)).error).toBe(stepText.unknownProject());
    expect(await h.app.store.recentJobs({ requesterId: 'U0ALICE' }, 5)).toEqual([]);
  });

  it('refuses a person named in "On behalf of" in a workflow a person used: the job would be theirs', async () => {
    const { executionId } = await runStep({ ...defaults, user_id: 'U0BOB' });
    const answer = await answerOf(executionId);
    expect(answer.method).toBe('functions.completeError');
    expect(answer.error).toBe(stepText.onBehalfOfWithPerson('U0BOB', 'U0ALICE'));
    expect(answer.error).toContain('WORKFLOW_ON_BEHALF_OF_USER_IDS');
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);
    expect(await h.app.store.recentJobs({ requesterId: 'U0BOB' }, 5)).toEqual([]);
    expect(await h.app.store.recentJobs({ requesterId: 'U0ALICE' }, 5)).toEqual([]);
    expect(h.slack.callsTo('chat.postMessage')).toEqual([]);
  });

  it('refuses a workflow built with only "On behalf of", saying the setting is off', async () => {
    const { user_context: _none, ...old } = defaults;
    const { executionId } = await runStep({ ...old, user_id: 'U0ALICE' });
    const answer = await answerOf(executionId);
    expect(answer.error).toBe(stepText.onBehalfOfRefused('U0ALICE', false));
    expect(answer.error).toContain('which is not set');
    await h.settled();
    expect(h.agent.requestsFor('create')).toHaveLength(0);
  });

  it('names the person who used the workflow on the status card, as started by a workflow', async () => {
    const { executionId } = await runStep({ ...defaults, user_id: 'U0ALICE' });
    const answer = await answerOf(executionId);
    expect(answer.method).toBe('functions.completeSuccess');
    const card = h.slack.messages.find((m) => m.channel === 'C0DOCS' && m.ts === answer.outputs?.thread_ts);
    expect(card?.text).toContain('Started by a workflow for <@U0ALICE>');
  });

  it('shows the builder no emoji codes and no chat instructions, however the step is refused', async () => {
    h.slack.guests.add('U0GUEST');
    const runs = [
      await runStep({ ...defaults, user_context: userContext('U0GUEST') }),
      await runStep({ ...defaults, instruction: 'x'.repeat(201) }),
      await runStep({ ...defaults, channel_id: 'D0ALICE' }),
      await runStep({ ...defaults, user_id: 'U0BOB' }),
      await runStep({ ...defaults, channel_id: 42 }),
    ];
    for (const { executionId } of runs) {
      const { error } = await answerOf(executionId);
      expect(error, error).not.toMatch(/:[a-z0-9_+-]+:/);
      expect(error, error).not.toMatch(/\byou\b|run \/docs-agent/i);
    }
  });

  it('never writes the secret of the person who used the workflow to the logs', async () => {
    const { executionId } = await runStep({ ...defaults, user_id: 'U0BOB' });
    await answerOf(executionId);
    await answerOf((await runStep(defaults)).executionId);
    await h.settled();
    expect(h.logs.filter((line) => line.includes(USER_CONTEXT_SECRET))).toEqual([]);
  });

  it('never writes the step token to the logs', async () => {
    const { executionId } = await runStep(defaults);
    await answerOf(executionId);
    expect(h.logs.filter((line) => line.includes(STEP_TOKEN))).toEqual([]);
  });
});
