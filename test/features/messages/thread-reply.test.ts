import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { threadReply } from '../../../src/features/messages/thread-reply.js';
import type { JobRecord } from '../../../src/store/types.js';
import { TEAM } from '../../helpers/fake-network.js';
import { CHANNEL } from '../../helpers/job-world.js';
import { boltEventArgs, createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';
import { BOT_USER_ID } from '../../helpers/slack-stand-in.js';

type Args = Parameters<ReturnType<typeof threadReply>>[0];

const HELPER = 'U0HELPER';
let w: ListenerWorld;
let job: JobRecord;
async function build(env: Record<string, string> = {}, options: { socketMode?: boolean } = {}) {
  w = createListenerWorld(env, options);
  job = (await w.activeJob()).job;
}
beforeEach(() => build());
afterEach(() => w.stop());

/** Calls the listener with Bolt's arguments for a message event in the job's thread. */
function message(fields: Record<string, unknown> = {}, context: Record<string, unknown> = {}) {
  const event = {
    type: 'message',
    channel: CHANNEL,
    channel_type: 'channel',
    user: HELPER,
    text: 'Also cover the SDK',
    ts: '1700000500.000500',
    thread_ts: job.threadTs,
    ...fields,
  };
  return threadReply(w.deps)(boltEventArgs<Args>(event, context));
}
const followUps = async () => (await w.runs(job.id)).filter((r) => r.kind === 'follow_up');

describe('a reply in a job’s thread', () => {
  it('is recorded before the listener returns, then sent to the agent', async () => {
    await message();
    expect((await followUps()).map((r) => [r.authorId, r.prompt, r.teamId])).toEqual([
      [HELPER, 'Also cover the SDK', TEAM],
    ]);
    await w.idle();
    expect(w.agent.sendMessage).toHaveBeenCalledWith('job_test_1', 'Also cover the SDK');
  });

  it('the same reply delivered twice is sent once', async () => {
    await message();
    await message();
    await w.idle();
    expect(await followUps()).toHaveLength(1);
    expect(w.agent.sendMessage).toHaveBeenCalledOnce();
  });

  it('a reply from another organisation’s member names their workspace', async () => {
    await message({ user_team: 'T0OTHERORG' });
    expect((await followUps())[0]?.teamId).toBe('T0OTHERORG');
    await w.idle();
    // …and is refused for it: only the installing workspace instructs the agent.
    expect(w.agent.sendMessage).not.toHaveBeenCalled();
  });

  it.each([
    ['another app', { bot_id: 'B0OTHERAPP' }, {}],
    ['an app’s message with a user', { app_id: 'A0OTHERAPP' }, {}],
    ['the bot itself', { user: BOT_USER_ID }, {}],
    ['the bot itself, before auth.test answered', { user: BOT_USER_ID }, { botUserId: undefined }],
    ['an edit', { subtype: 'message_changed' }, {}],
    ['a deletion', { subtype: 'message_deleted' }, {}],
    ['someone joining', { subtype: 'channel_join' }, {}],
    ['a top-level message', { thread_ts: undefined }, {}],
    ['the thread’s root itself', { ts: '1700000000.000001' }, {}],
    ['an aside', { text: '// just between us' }, {}],
    ['an event with no author', { user: undefined }, {}],
  ])('ignores %s: nothing recorded', async (_what, fields, context) => {
    await message(fields, context);
    await w.idle();
    expect(await followUps()).toEqual([]);
    expect(w.deps.tasks.run).not.toHaveBeenCalled();
  });

  it('records nothing for a reply in a thread with no job', async () => {
    await message({ thread_ts: '1699999999.000009' });
    expect(w.runCount()).toBe(1);
    expect(w.deps.tasks.run).not.toHaveBeenCalled();
  });

  it('in mention mode, takes only replies that mention the bot', async () => {
    await w.stop();
    await build({ FOLLOW_UP_MODE: 'mention' });
    await message({ text: 'thinking out loud' });
    expect(await followUps()).toEqual([]);
    await message({ ts: '1700000600.000600', text: `<@${BOT_USER_ID}> also the CLI` });
    expect((await followUps()).map((r) => r.prompt)).toEqual(['also the CLI']);
  });

  describe('when the store cannot record it', () => {
    const failing = () => vi.spyOn(w.deps.jobs, 'acceptReply').mockRejectedValue(new Error('disk I/O error'));

    it('over HTTP, fails the event so Slack delivers it again', async () => {
      failing();
      await expect(message()).rejects.toThrow('disk I/O error');
      expect(w.slack.postEphemeral).not.toHaveBeenCalled();
    });

    it('in Socket Mode, tells the author privately in the thread', async () => {
      await w.stop();
      await build({}, { socketMode: true });
      failing();
      await message();
      await w.idle();
      expect(w.slack.postEphemeral).toHaveBeenCalledOnce();
      expect(w.slack.postEphemeral.mock.calls[0]?.[0]).toMatchObject({
        channel: CHANNEL,
        user: HELPER,
        threadTs: job.threadTs,
      });
    });

    it('with no slot free to tell them, logs who was not told', async () => {
      await w.stop();
      await build({}, { socketMode: true });
      failing();
      vi.mocked(w.deps.tasks.run).mockReturnValueOnce(false);
      await message();
      expect(w.logged('error', 'no room to tell the person')).toHaveLength(1);
    });
  });
});
