import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerEvents } from '../../../src/listeners/events/index.js';
import { WHOLE_CONVERSATION } from '../../../src/store/assistant-threads.js';
import { TEAM } from '../../helpers/fake-network.js';
import { type ListenerApp, startListenerApp } from '../../helpers/listener-app.js';
import { createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';
import { appMention, messageChanged, minimalDeletion } from '../../helpers/payloads.js';
import { BOT_USER_ID } from '../../helpers/slack-stand-in.js';

// One app for the file: each test works in a conversation of its own.
let w: ListenerWorld;
let app: ListenerApp;
beforeAll(async () => {
  w = createListenerWorld();
  app = await startListenerApp(w, registerEvents);
});
afterAll(async () => {
  await app.stop();
  await w.stop();
});

/** A job the agent is working on, in a channel of its own; and a reply waiting in its thread. */
async function jobWithWaitingReply(channelId: string, replyTs: string) {
  const { job } = await w.activeJob({ channelId });
  const threadTs = job.threadTs ?? '';
  await w.jobs.acceptReply({
    teamId: TEAM,
    channelId,
    threadTs,
    messageTs: replyTs,
    userId: 'U0HELPER',
    text: 'Also cover the SDK',
  });
  const reply = async () => (await w.runs(job.id)).find((r) => r.messageTs === replyTs);
  return { job, threadTs, reply };
}

const delivered = async (res: Response) => {
  expect(res.status).toBe(200);
  await w.idle();
};

describe('registerEvents', () => {
  it('routes a reply in a job’s thread to the job, as a follow-up', async () => {
    const { job, threadTs } = await jobWithWaitingReply('C0REPLIES', '1700000300.000001');
    const res = await app.event({
      type: 'message',
      channel: 'C0REPLIES',
      channel_type: 'channel',
      user: 'W0GRIDUSER',
      text: 'Also mention the rate limits',
      ts: '1700000300.000002',
      thread_ts: threadTs,
      event_ts: '1700000300.000002',
    });
    await delivered(res);
    expect((await w.runs(job.id)).map((r) => r.prompt)).toContain('Also mention the rate limits');
  });

  it('routes a direct message at the top of the conversation: a new job', async () => {
    await delivered(
      await app.event({
        type: 'message',
        channel: 'D0DIRECT',
        channel_type: 'im',
        user: 'U0DIRECT',
        text: 'Document the webhooks',
        ts: '1700000400.000001',
        event_ts: '1700000400.000001',
      }),
    );
    expect(await w.store.recentJobs({ requesterId: 'U0DIRECT' }, 5)).toEqual([
      expect.objectContaining({ origin: 'direct', threadTs: '1700000400.000001' }),
    ]);
  });

  it('routes an edit of a waiting reply: its new text replaces the old', async () => {
    const { threadTs, reply } = await jobWithWaitingReply('C0EDITS', '1700000500.000001');
    await delivered(
      await app.event(
        messageChanged({
          channel: 'C0EDITS',
          ts: '1700000500.000001',
          thread_ts: threadTs,
          user: 'U0HELPER',
          text: 'Also cover the CLI',
          previous: 'Also cover the SDK',
        }),
      ),
    );
    expect(await reply()).toMatchObject({ prompt: 'Also cover the CLI' });
  });

  it('routes a deletion Slack sends in its smallest form (no previous_message): the waiting reply is withdrawn', async () => {
    const { reply } = await jobWithWaitingReply('C0DELETES', '1700000600.000001');
    await delivered(await app.event(minimalDeletion('C0DELETES', '1700000600.000001')));
    expect(await reply()).toMatchObject({ state: 'failed', error: 'withdrawn' });
  });

  it('routes a mention: a job in the mention’s thread', async () => {
    const mention = {
      ...appMention({ text: `<@${BOT_USER_ID}> Document the CLI`, user: 'U0MENTION' }),
      channel: 'C0MENTIONS',
    };
    await delivered(await app.event(mention));
    expect(await w.store.recentJobs({ requesterId: 'U0MENTION' }, 5)).toEqual([
      expect.objectContaining({ origin: 'mention', threadTs: mention.ts }),
    ]);
  });

  it('routes the App Home opening: the person’s Home tab is published', async () => {
    await delivered(
      await app.event({
        type: 'app_home_opened',
        user: 'U0HOME',
        channel: 'D0HOME',
        tab: 'home',
        event_ts: '1.2',
      }),
    );
    expect(w.slack.publishHome).toHaveBeenCalledWith('U0HOME', expect.objectContaining({ type: 'home' }));
  });

  it('routes a change of the Messages tab’s context: recorded for the whole conversation', async () => {
    await delivered(
      await app.event({
        type: 'app_context_changed',
        channel: 'D0CONTEXT',
        user: 'U0ALICE',
        context: { entities: [{ type: 'slack#/types/channel_id', value: 'C0API' }] },
        event_ts: '1783536983.000002',
      }),
    );
    expect(await w.store.assistantThread('D0CONTEXT', WHOLE_CONVERSATION)).toEqual({
      contextChannelId: 'C0API',
    });
  });

  it('answers an event it does not listen to, and an unreadable one, without a failure', async () => {
    await delivered(await app.event({ type: 'reaction_added', user: 'U0ALICE', reaction: 'eyes' }));
    await delivered(await app.event({ type: 'app_mention', user: 42, team: null }));
    expect(w.logged('error', 'unhandled error in a listener')).toEqual([]);
  });
});
