import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { text } from '../../../src/blocks/messages.js';
import { directMessage } from '../../../src/features/messages/direct-message.js';
import { TEAM } from '../../helpers/fake-network.js';
import { boltEventArgs, createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';
import { BOT_USER_ID } from '../../helpers/slack-stand-in.js';

type Args = Parameters<ReturnType<typeof directMessage>>[0];

const DM = 'D0ALICE';
const ALICE = 'U0ALICE';
const TS = '1700000700.000100';
let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld();
});
afterEach(() => w.stop());

/** Calls the listener with Bolt's arguments for a message in Alice's direct message with the bot. */
function dm(fields: Record<string, unknown> = {}, context: Record<string, unknown> = {}) {
  const event = {
    type: 'message',
    channel: DM,
    channel_type: 'im',
    user: ALICE,
    text: 'Document the webhooks retry policy',
    ts: TS,
    event_ts: TS,
    ...fields,
  };
  return directMessage(w.deps)(boltEventArgs<Args>(event, context));
}

const jobs = () => w.store.recentJobs({ requesterId: ALICE }, 5);

describe('a direct message to the bot', () => {
  it('at the top: records a job whose thread is the message before returning, then starts it', async () => {
    await dm();
    expect(await jobs()).toEqual([
      expect.objectContaining({ origin: 'direct', channelId: DM, threadTs: TS, privacy: 'direct' }),
    ]);
    await w.idle();
    expect(w.agent.createJob).toHaveBeenCalledWith('Document the webhooks retry policy');
  });

  it('in the thread of a job: a follow-up to it', async () => {
    const { job } = await w.activeJob({ channelId: DM, requesterId: ALICE });
    await dm({ thread_ts: job.threadTs, text: 'Also cover the backoff schedule' });
    await w.idle();
    expect(w.jobCount()).toBe(1);
    expect(w.agent.sendMessage).toHaveBeenCalledWith('job_test_1', 'Also cover the backoff schedule');
  });

  it('in an assistant pane’s thread: a job of the pane, for the channel it is beside', async () => {
    const thread = '1700000600.000001';
    await w.store.recordAssistantThread(
      { channelId: DM, threadTs: thread, contextChannelId: 'C0API' },
      w.clock.at,
    );
    await dm({ thread_ts: thread });
    expect(await jobs()).toEqual([
      expect.objectContaining({ threadTs: thread, privacy: 'pane', contextChannelId: 'C0API' }),
    ]);
  });

  it('with the context Slack sends with it (agent messaging): a job of the pane, beside that channel', async () => {
    // Slack's `app_context`: the same shape as the `context` of `app_context_changed`.
    await dm({
      app_context: {
        entities: [
          { type: 'slack#/types/canvas_id', value: 'F0CANVAS', team_id: TEAM },
          { type: 'slack#/types/channel_id', value: 'C0API', team_id: TEAM },
        ],
      },
    });
    expect(await jobs()).toEqual([
      expect.objectContaining({ origin: 'direct', privacy: 'pane', contextChannelId: 'C0API' }),
    ]);
  });

  it('with an empty context (nothing in view): a job of the pane beside no channel, replacing an earlier one', async () => {
    await w.store.recordAssistantThread(
      { channelId: DM, threadTs: '', contextChannelId: 'C0OLD' },
      // Reported before the message was written.
      Number(TS) * 1000 - 60_000,
    );
    await dm({ app_context: {} });
    expect(await jobs()).toEqual([expect.objectContaining({ privacy: 'pane', contextChannelId: null })]);
  });

  it('from an Enterprise Grid member: recorded for the author’s own workspace', async () => {
    const accept = vi.spyOn(w.deps.jobs, 'recordMessage');
    await dm({ user: 'W0GRIDUSER', user_team: 'E0GRID' });
    await dm({ ts: '1700000700.000200', user: 'W0GRIDUSER', source_team: 'T0SOURCE' });
    await dm({ ts: '1700000700.000300' });
    expect(accept.mock.calls.map((c) => [c[0].userId, c[0].teamId])).toEqual([
      ['W0GRIDUSER', 'E0GRID'],
      ['W0GRIDUSER', 'T0SOURCE'],
      [ALICE, TEAM],
    ]);
  });

  it('a file shared with a comment: the files go with the instruction, by name and type', async () => {
    const accept = vi.spyOn(w.deps.jobs, 'recordMessage');
    await dm({ subtype: 'file_share', files: [{ id: 'F0SPEC', name: 'spec.pdf', filetype: 'pdf' }] });
    expect(accept.mock.calls[0]?.[0].files).toEqual([{ name: 'spec.pdf', type: 'pdf' }]);
  });

  it('the same message delivered twice starts one job', async () => {
    await dm();
    await dm();
    await w.idle();
    expect(w.jobCount()).toBe(1);
    expect(w.agent.createJob).toHaveBeenCalledOnce();
  });

  it.each([
    ['the bot itself', { user: BOT_USER_ID }, {}],
    ['the bot itself, before auth.test answered', { user: BOT_USER_ID }, { botUserId: undefined }],
    ['another app', { bot_id: 'B0OTHERAPP', user: 'U0APPUSER' }, {}],
    ['an edit', { subtype: 'message_changed' }, {}],
    [
      'a tombstone left by a deleted thread root',
      { subtype: 'tombstone', hidden: true, user: 'USLACKBOT' },
      {},
    ],
    ['an aside', { text: '// just thinking out loud' }, {}],
    ['an empty message', { text: '' }, {}],
    ['a message in a channel', { channel: 'C0GENERAL', channel_type: 'channel' }, {}],
    ['a message said to be direct in a conversation that is not', { channel: 'C0GENERAL' }, {}],
  ])('ignores %s: nothing recorded, nothing logged', async (_what, fields, context) => {
    await dm(fields, context);
    await w.idle();
    expect(w.jobCount()).toBe(0);
    expect(w.deps.tasks.run).not.toHaveBeenCalled();
    expect(w.logged('warn', 'could not be read')).toEqual([]);
  });

  it.each([
    ['without an author', { user: undefined }, 'user: invalid_type'],
    ['whose text is not a string', { text: { rich: true } }, 'text: invalid_type'],
    ['whose thread_ts is not a string', { thread_ts: 1700000700 }, 'thread_ts: invalid_type'],
    ['in a D… conversation, not marked as im', { channel_type: 'app_home' }, 'channel_type: invalid_value'],
  ])('a message %s is logged as unreadable, and records nothing', async (_what, fields, field) => {
    await expect(dm(fields)).resolves.toBeUndefined();
    expect(w.jobCount()).toBe(0);
    const [line] = w.logged('warn', 'could not be read');
    expect(JSON.parse(line as string)).toMatchObject({ what: 'direct message', fields: [field] });
  });

  it('an app’s unreadable message is not logged', async () => {
    await dm({ bot_id: 'B0OTHERAPP', user: undefined });
    expect(w.logged('warn', 'could not be read')).toEqual([]);
  });

  describe('when the store cannot record it', () => {
    beforeEach(() => {
      vi.spyOn(w.deps.jobs, 'recordMessage').mockRejectedValue(new Error('disk I/O error'));
    });

    it('over HTTP, fails the event so Slack delivers it again', async () => {
      await expect(dm()).rejects.toThrow('disk I/O error');
      expect(w.slack.postEphemeral).not.toHaveBeenCalled();
    });

    it('on Slack’s last retry, tells the person privately, in the thread they wrote in', async () => {
      await dm({ thread_ts: '1700000600.000001' }, { retryNum: 3 });
      await w.idle();
      expect(w.slack.postEphemeral).toHaveBeenCalledWith({
        channel: DM,
        user: ALICE,
        threadTs: '1700000600.000001',
        text: text.notRecorded(),
      });
    });
  });
});
