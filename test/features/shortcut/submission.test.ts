import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BLOCK, INPUT_ACTION } from '../../../src/features/shortcut/modal.js';
import { sendToDocsAgentSubmission } from '../../../src/features/shortcut/submission.js';
import { SlackCallError } from '../../../src/slack/caller.js';
import { member, TEAM } from '../../helpers/fake-network.js';
import { CHANNEL, REQUESTER } from '../../helpers/job-world.js';
import { ackSpy, boltExtras, createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';

type Args = Parameters<ReturnType<typeof sendToDocsAgentSubmission>>[0];

let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld({ MAX_PROMPT_CHARS: '200' });
});
afterEach(() => w.stop());

const METADATA = { channel: CHANNEL, ts: '1700000200.000200', author: 'U0AUTHOR' };
/** Calls the listener with Bolt's arguments for the modal's submission; returns its `ack` spy. */
async function submit(
  values: { instruction?: string | null; message?: string; channel?: string | null } = {},
  metadata: unknown = METADATA,
  viewId = 'V0TEST1',
) {
  const spy = ackSpy(w);
  const input = (v: Record<string, unknown>) => ({ [INPUT_ACTION]: v });
  const body = {
    type: 'view_submission',
    team: { id: TEAM },
    user: { id: REQUESTER, team_id: TEAM },
    view: {
      id: viewId,
      callback_id: 'send_to_docs_agent_modal',
      private_metadata: typeof metadata === 'string' ? metadata : JSON.stringify(metadata),
      state: {
        values: {
          [BLOCK.instruction]: input({
            value: 'instruction' in values ? values.instruction : ' Write a <guide> ',
          }),
          [BLOCK.message]: input({ value: values.message ?? 'How do I rotate keys?' }),
          [BLOCK.channel]: input({ selected_conversation: 'channel' in values ? values.channel : CHANNEL }),
        },
      },
    },
  };
  await sendToDocsAgentSubmission(w.deps)({
    ack: spy.ack,
    body,
    view: body.view,
    payload: body.view,
    respond: vi.fn(),
    context: {},
    ...boltExtras(),
  } as unknown as Args);
  return spy;
}
const errorsOf = (ack: ReturnType<typeof ackSpy>['ack']) => {
  expect(ack).toHaveBeenCalledOnce();
  const answer = ack.mock.calls[0]?.[0] as { response_action?: string; errors?: Record<string, string> };
  expect(answer?.response_action).toBe('errors');
  return answer.errors ?? {};
};

describe('the send-to-agent modal submitted', () => {
  it('records the job before closing the modal, then starts it', async () => {
    w.slack.userInfo.mockResolvedValue(member('Ada'));
    const { ack, jobsAtAck } = await submit();
    expect(ack).toHaveBeenCalledWith();
    expect(jobsAtAck).toEqual([1]);
    const [job] = await w.store.recentJobs({ requesterId: REQUESTER }, 5);
    // Recorded Slack-encoded, like a command's instruction; the thread is the message's.
    expect(job).toMatchObject({
      origin: 'shortcut',
      instruction: 'Write a &lt;guide&gt;',
      threadTs: '1700000200.000200',
    });
    await w.idle();
    const prompt = String(w.agent.createJob.mock.calls[0]?.[0]);
    expect(prompt).toContain('Write a <guide>');
    expect(prompt).toContain('Ada');
    expect(prompt).toContain('How do I rotate keys?');
  });

  it.each([
    ['no instruction', { instruction: '   ' }, BLOCK.instruction, 'Write what the docs agent should do'],
    [
      'a missing instruction',
      { instruction: null },
      BLOCK.instruction,
      'Write what the docs agent should do',
    ],
    ['an instruction over MAX_PROMPT_CHARS', { instruction: 'q'.repeat(201) }, BLOCK.instruction, '201'],
    ['no channel', { channel: null }, BLOCK.channel, 'Pick the channel'],
    ['a direct message', { channel: 'D0DIRECT' }, BLOCK.channel, 'Jobs run in channels'],
  ])('answers %s inside the modal, recording nothing', async (_what, values, block, says) => {
    const { ack } = await submit(values);
    expect(errorsOf(ack)[block]).toContain(says);
    expect(w.jobCount()).toBe(0);
  });

  it.each([
    [
      'the bot is not in',
      { isMember: false, isArchived: false, isDirect: false, isPrivate: false },
      'member',
    ],
    ['that is archived', { isMember: true, isArchived: true, isDirect: false, isPrivate: false }, 'archived'],
  ])('refuses a channel %s', async (_what, facts, says) => {
    w.slack.conversationFacts.mockResolvedValueOnce(facts);
    const { ack } = await submit();
    expect(errorsOf(ack)[BLOCK.channel]).toContain(says);
    expect(w.jobCount()).toBe(0);
  });

  it('refuses a channel Slack cannot find', async () => {
    w.slack.conversationFacts.mockRejectedValueOnce(
      new SlackCallError('conversations.info', 'channel_not_found', { platform: true }),
    );
    const { ack } = await submit();
    expect(errorsOf(ack)[BLOCK.channel]).toContain('cannot see that channel');
  });

  it('records the job when Slack cannot say whether the bot is in the channel (the post decides)', async () => {
    w.slack.conversationFacts.mockRejectedValueOnce(new SlackCallError('conversations.info', 'fatal_error'));
    const { ack } = await submit();
    expect(ack).toHaveBeenCalledWith();
    expect(w.jobCount()).toBe(1);
  });

  it('refuses a channel outside ALLOWED_CHANNEL_IDS without asking Slack', async () => {
    await w.stop();
    w = createListenerWorld({ ALLOWED_CHANNEL_IDS: 'C0OTHER' });
    const { ack } = await submit();
    expect(Object.keys(errorsOf(ack))).toEqual([BLOCK.channel]);
    expect(w.slack.conversationFacts).not.toHaveBeenCalled();
  });

  it('answers a form it cannot read inside the modal', async () => {
    const { ack } = await submit({}, 'not json');
    expect(errorsOf(ack)[BLOCK.instruction]).toContain('could not read this form');
    expect(w.logged('warn', 'modal submission not understood')).toHaveLength(1);
    expect(w.jobCount()).toBe(0);
  });

  it('logs which fields of a form it cannot read failed, and none of what was typed', async () => {
    const { ack } = await submit({}, { ...METADATA, author: 42, permalink: 'classified-link' });
    expect(errorsOf(ack)[BLOCK.instruction]).toContain('could not read this form');
    const lines = w.logged('warn', 'modal submission not understood');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('author: invalid_type');
    expect(lines[0]).not.toContain('classified');
    expect(lines[0]).not.toContain('rotate keys');
  });

  it('the same submission again closes the modal and starts nothing more', async () => {
    await submit();
    const { ack } = await submit();
    expect(ack).toHaveBeenCalledWith();
    await w.idle();
    expect(w.jobCount()).toBe(1);
    expect(w.agent.createJob).toHaveBeenCalledOnce();
  });

  it('says so when the message’s thread already has a job', async () => {
    await submit();
    const { ack } = await submit({}, METADATA, 'V0TEST2');
    expect(errorsOf(ack)[BLOCK.channel]).toContain('already');
    expect(w.jobCount()).toBe(1);
  });

  it('says so inside the modal when the store cannot record it', async () => {
    vi.spyOn(w.deps.jobs, 'recordJob').mockRejectedValueOnce(new Error('disk I/O error'));
    const { ack } = await submit();
    expect(errorsOf(ack)[BLOCK.instruction]).toContain('could not record');
    expect(w.logged('error', 'could not record a shortcut submission')).toHaveLength(1);
  });
});
