import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { appMention, bareMentionText } from '../../../src/features/messages/app-mention.js';
import { CHANNEL, REQUESTER } from '../../helpers/job-world.js';
import { boltEventArgs, createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';
import { BOT_USER_ID } from '../../helpers/slack-stand-in.js';

type Args = Parameters<ReturnType<typeof appMention>>[0];

let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld();
});
afterEach(() => w.stop());

const TS = '1700000100.000100';
/** Calls the listener with Bolt's arguments for an app_mention event. */
function mention(fields: Record<string, unknown> = {}, context: Record<string, unknown> = {}) {
  const event = {
    type: 'app_mention',
    user: REQUESTER,
    text: `<@${BOT_USER_ID}> Document the webhooks`,
    ts: TS,
    channel: CHANNEL,
    event_ts: TS,
    ...fields,
  };
  return appMention(w.deps)(boltEventArgs<Args>(event, context));
}

describe('app_mention', () => {
  it('records a job in the mention’s thread before returning, then starts it', async () => {
    await mention();
    // Over HTTP the receiver answers Slack after the listener: the job is recorded by then.
    const [job] = await w.store.recentJobs({ requesterId: REQUESTER }, 5);
    expect(job).toMatchObject({ origin: 'mention', threadTs: TS, instruction: 'Document the webhooks' });
    await w.idle();
    expect(w.agent.createJob).toHaveBeenCalledWith('Document the webhooks');
  });

  it('in a thread with a running job: sends the mention as a follow-up', async () => {
    const { job } = await w.activeJob();
    await mention({ thread_ts: job.threadTs, text: `<@${BOT_USER_ID}> also the SDK` });
    await w.idle();
    expect(w.jobCount()).toBe(1);
    expect(w.agent.sendMessage).toHaveBeenCalledWith('job_test_1', 'also the SDK');
  });

  it('a bare mention is explained privately, and records nothing', async () => {
    await mention({ text: `<@${BOT_USER_ID}>` });
    await w.idle();
    expect(w.jobCount()).toBe(0);
    expect(w.slack.postEphemeral).toHaveBeenCalledOnce();
    expect(w.slack.postEphemeral.mock.calls[0]?.[0]).toMatchObject({ channel: CHANNEL, user: REQUESTER });
    expect(JSON.stringify(w.slack.postEphemeral.mock.calls[0]?.[0])).toContain('Tell me what to do');
  });

  it.each([
    ['another app', { bot_id: 'B0OTHERAPP' }, {}],
    ['the bot itself', { user: BOT_USER_ID }, {}],
    ['the bot itself, before auth.test answered', { user: BOT_USER_ID }, { botUserId: undefined }],
    ['an edit', { subtype: 'message_changed' }, {}],
    ['a deletion', { subtype: 'message_deleted' }, {}],
    ['an event with no author', { user: undefined }, {}],
    ['an event with no ts', { ts: '' }, {}],
  ])('ignores a mention by %s: nothing recorded, nothing said', async (_what, fields, context) => {
    await mention(fields, context);
    await w.idle();
    expect(w.jobCount()).toBe(0);
    expect(w.slack.postEphemeral).not.toHaveBeenCalled();
    expect(w.deps.tasks.run).not.toHaveBeenCalled();
  });

  it('reads a mention whose author is not a user id as unreadable: logged by field, no one addressed', async () => {
    // Slack's last retry with the store down would tell the author privately: not this one.
    vi.spyOn(w.deps.jobs, 'recordMessage').mockRejectedValue(new Error('disk I/O error'));
    await mention({ user: '<!channel>' }, { retryNum: 3 });
    await w.idle();
    expect(w.jobCount()).toBe(0);
    expect(w.slack.postEphemeral).not.toHaveBeenCalled();
    const [line] = w.logged('warn', 'could not be read');
    expect(JSON.parse(line as string).fields).toEqual(['user: custom']);
    expect(w.logs.join('\n')).not.toContain('<!channel>');
  });

  it('takes a mention posted with “Also send to channel” as an instruction', async () => {
    await mention({ subtype: 'thread_broadcast' });
    expect(w.jobCount()).toBe(1);
  });

  it('the same mention delivered twice starts one job', async () => {
    await mention();
    await mention();
    await w.idle();
    expect(w.jobCount()).toBe(1);
    expect(w.agent.createJob).toHaveBeenCalledOnce();
  });

  describe('when the store cannot record it', () => {
    beforeEach(() => {
      vi.spyOn(w.deps.jobs, 'recordMessage').mockRejectedValue(new Error('disk I/O error'));
    });

    it('over HTTP, fails the event so Slack delivers it again, and says nothing yet', async () => {
      await expect(mention()).rejects.toThrow('disk I/O error');
      expect(w.slack.postEphemeral).not.toHaveBeenCalled();
      expect(w.logged('error', 'could not record an instruction')).toHaveLength(1);
    });

    it('on Slack’s last retry, tells the person privately instead', async () => {
      await mention({}, { retryNum: 3 });
      await w.idle();
      expect(w.slack.postEphemeral).toHaveBeenCalledOnce();
      expect(JSON.stringify(w.slack.postEphemeral.mock.calls[0]?.[0])).toContain('could not record');
    });

    it('in Socket Mode (no re-delivery), tells the person privately at once', async () => {
      await w.stop();
      w = createListenerWorld({}, { socketMode: true });
      vi.spyOn(w.deps.jobs, 'recordMessage').mockRejectedValue(new Error('disk I/O error'));
      await mention();
      await w.idle();
      expect(w.slack.postEphemeral).toHaveBeenCalledOnce();
    });
  });
});

describe('bareMentionText', () => {
  it('says what did not happen, mentioning nobody', () => {
    expect(bareMentionText()).toContain('Nothing was started.');
    expect(bareMentionText()).not.toMatch(/<[@!#h]/);
  });
});
