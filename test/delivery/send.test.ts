import { WebClient } from '@slack/web-api';
import { beforeEach, describe, expect, it } from 'vitest';
import { ClaimLost } from '../../src/delivery/rescue.js';
import { createSender } from '../../src/delivery/send.js';
import { createAgentSessions } from '../../src/slack/agent-sessions.js';
import { createSlackCaller } from '../../src/slack/caller.js';
import { md } from '../../src/slack/mrkdwn.js';
import type { NewOutboxItem, OutboxPayload } from '../../src/store/types.js';
import { HINTS, useDeliveryWorld } from '../helpers/delivery-world.js';
import { BOT_TOKEN } from '../helpers/slack-stand-in.js';

const ROOT = '1700000000.000100';
const claimCovers = async () => true;

const w = useDeliveryWorld();
let refreshed: string[];
let stepItems: OutboxPayload[];
let send: ReturnType<typeof createSender>;
beforeEach(async () => {
  refreshed = [];
  stepItems = [];
  const client = new WebClient(BOT_TOKEN, { slackApiUrl: w.slack.apiUrl, retryConfig: { retries: 0 } });
  send = createSender({
    store: w.store,
    instanceId: 'i-test',
    slack: w.gateway,
    logger: w.logger,
    hints: HINTS,
    sessions: createAgentSessions(createSlackCaller({ client, logger: w.logger, redact: (text) => text })),
    home: { refresh: async (userId) => void refreshed.push(userId) },
    steps: {
      send: async (_item, payload) => {
        stepItems.push(payload);
        return { laterAt: w.clock.at + 10_000 };
      },
    },
    now: () => w.clock.at,
  });
});

const threadPost = (fields: Partial<Extract<OutboxPayload, { type: 'post' }>> = {}): NewOutboxItem => ({
  jobId: null,
  dedupeKey: 'outcome:2:7',
  payload: {
    type: 'post',
    channel: 'C0DOCS',
    threadTs: ROOT,
    text: 'Done: <https://github.com/acme/docs/pull/7|the pull request>',
    eventType: 'docs_agent_post',
    about: { kind: 'outcome', run: 2, source: '1700000000.000200' },
    ...fields,
  },
});

describe('sending an outbox item', () => {
  it('sends nothing once the claim on it was taken over', async () => {
    const item = await w.claimed(threadPost());
    await expect(send(item, async () => false)).rejects.toBeInstanceOf(ClaimLost);
    expect(w.slack.calls).toEqual([]);
  });
});

describe('a thread post', () => {
  it('is posted in its thread with metadata naming its run and key', async () => {
    await send(await w.claimed(threadPost()), claimCovers);
    expect(w.slack.threadPosts(ROOT)).toMatchObject([
      {
        text: 'Done: <https://github.com/acme/docs/pull/7|the pull request>',
        metadata: {
          event_type: 'docs_agent_post',
          event_payload: { kind: 'outcome', run: 2, source: '1700000000.000200', key: 'outcome:2:7' },
        },
      },
    ]);
    expect(w.slack.callsTo('conversations.replies')).toEqual([]);
  });

  it('is named by its outbox id when it has no key, and carries its blocks', async () => {
    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: 'Done' } }];
    const item = await w.claimed({ ...threadPost({ blocks }), dedupeKey: null });
    await send(item, claimCovers);
    const [posted] = w.slack.threadPosts(ROOT);
    expect(posted?.blocks).toEqual(blocks);
    expect(posted?.metadata?.event_payload.key).toBe(`outbox-${item.id}`);
  });

  it('is not posted again when an attempt that never recorded its answer had posted it', async () => {
    const item = await w.claimed(threadPost());
    await send(item, claimCovers);
    await send({ ...item, attempts: 2 }, claimCovers);
    expect(w.slack.callsTo('conversations.replies')).toHaveLength(1);
    expect(w.slack.threadPosts(ROOT)).toHaveLength(1);
  });

  it('is posted by a later attempt that finds no copy, if the claim still holds after looking', async () => {
    const item = { ...(await w.claimed(threadPost())), attempts: 2 };
    let checks = 0;
    // Held for the start of the attempt, lost while looking.
    await expect(send(item, async () => ++checks === 1)).rejects.toBeInstanceOf(ClaimLost);
    expect(w.slack.callsTo('chat.postMessage')).toEqual([]);
    await send(item, claimCovers);
    expect(w.slack.threadPosts(ROOT)).toHaveLength(1);
  });

  it('waits when Slack cannot say now whether it has a copy, and posts when it never can', async () => {
    const item = { ...(await w.claimed(threadPost())), attempts: 2 };
    w.slack.fail('conversations.replies', { error: 'ratelimited' }, { error: 'missing_scope' });
    await expect(send(item, claimCovers)).rejects.toMatchObject({ code: 'ratelimited' });
    expect(w.slack.callsTo('chat.postMessage')).toEqual([]);
    await send(item, claimCovers);
    expect(w.slack.threadPosts(ROOT)).toHaveLength(1);
  });

  it('passes Slack’s refusal on to the outbox, which decides about it', async () => {
    const item = await w.claimed(threadPost());
    w.slack.fail('chat.postMessage', { error: 'not_in_channel' }, { error: 'invalid_auth' });
    await expect(send(item, claimCovers)).rejects.toMatchObject({ code: 'not_in_channel', permanent: true });
    await expect(send(item, claimCovers)).rejects.toMatchObject({ code: 'invalid_auth', permanent: false });
  });
});

describe('a status card update', () => {
  async function cardJob() {
    const cardTs = await w.gateway.postMessage({ channel: 'C0DOCS', text: md`card` });
    const job = await w.job({ phase: 'active', threadTs: cardTs, cardTs, runCount: 1, agentJobId: 'job_1' });
    const update = (): NewOutboxItem => ({
      jobId: job.id,
      dedupeKey: null,
      payload: { type: 'update_root', channel: 'C0DOCS', ts: cardTs },
    });
    return { job, cardTs, update };
  }

  it('renders the card from the job as it is now, with its session, emoji and the requester’s App Home', async () => {
    const { job, cardTs, update } = await cardJob();
    const item = await w.claimed(update());
    await w.store.apply({ jobId: job.id, job: { phase: 'idle', lastOutcome: 'completed_pr' } }, w.clock.at);
    expect(await send(item, claimCovers)).toBeUndefined();
    const card = w.slack.messages.find((m) => m.ts === cardTs);
    expect(w.slack.callsTo('chat.update')).toHaveLength(1);
    expect(card?.text).not.toBe('card');
    expect(JSON.stringify(card?.blocks)).toContain('Document the retry settings');
    expect(w.slack.sessionOf('C0DOCS', cardTs)?.status).toBe('active');
    expect(w.slack.reactionsOn('C0DOCS', cardTs)).toEqual(['white_check_mark']);
    expect(refreshed).toEqual(['U0ALICE']);
    expect(w.slack.invalid).toEqual([]);
  });

  it('covers the updates queued before it: they are not sent again', async () => {
    const { job, update } = await cardJob();
    await w.store.enqueue([update()], w.clock.at);
    await w.store.enqueue([update()], w.clock.at);
    const [first] = await w.store.claimOutbox('i-test', w.clock.at, 1, 10_000);
    if (!first) throw new Error('nothing due');
    await send(first, claimCovers);
    expect(await w.store.latestCardUpdate(job.id)).toBeUndefined();
    expect(await w.store.claimOutbox('i-test', w.clock.at, 10, 10_000)).toEqual([]);
  });

  it('fails when Slack lost the card, or rate limits the session, and then touches nothing else', async () => {
    const { job, update } = await cardJob();
    const item = await w.claimed(update());
    w.slack.fail('agents.sessions.setStatus', { error: 'ratelimited' });
    await expect(send(item, claimCovers)).rejects.toMatchObject({ code: 'ratelimited' });
    expect(w.slack.callsTo('chat.update')).toEqual([]);
    w.slack.fail('chat.update', { error: 'message_not_found' });
    await expect(send(item, claimCovers)).rejects.toMatchObject({ code: 'message_not_found' });
    expect(w.slack.callsTo('reactions.add')).toEqual([]);
    expect(refreshed).toEqual([]);
    expect((await w.store.getJob(job.id))?.rootReaction).toBeNull();
  });

  it('is nothing to do for a job the store no longer has', async () => {
    const { update } = await cardJob();
    const item = await w.claimed(update());
    expect(await send({ ...item, jobId: null }, claimCovers)).toBeUndefined();
    expect(await send({ ...item, jobId: 9_999 }, claimCovers)).toBeUndefined();
    expect(w.slack.callsTo('chat.update')).toEqual([]);
  });
});

describe('the other kinds', () => {
  it('puts an emoji on a message, once however often it is sent', async () => {
    const item = await w.claimed({
      jobId: null,
      dedupeKey: 'received:41',
      payload: { type: 'reaction', channel: 'C0DOCS', ts: '1700000000.000300', name: 'eyes' },
    });
    await send(item, claimCovers);
    await send(item, claimCovers);
    expect(w.slack.reactionsOn('C0DOCS', '1700000000.000300')).toEqual(['eyes']);
  });

  it('answers a command through its response_url, privately', async () => {
    const responseUrl = w.slack.responseUrl('cmd-1');
    const item = await w.claimed({
      jobId: null,
      dedupeKey: 'refused:1',
      payload: {
        type: 'respond',
        responseUrl,
        text: 'Not here',
        fallback: { channel: 'C0DOCS', user: 'U0ALICE' },
      },
    });
    await send(item, claimCovers);
    expect(w.slack.responses).toEqual([
      {
        path: '/respond/cmd-1',
        body: { response_type: 'ephemeral', replace_original: false, text: 'Not here' },
      },
    ]);
    expect(w.slack.callsTo('chat.postEphemeral')).toEqual([]);
  });

  it('says it privately in the channel once the response_url expired, and fails without a fallback', async () => {
    const responseUrl = w.slack.responseUrl('expired-1');
    const payload = { type: 'respond' as const, responseUrl, text: 'Not here' };
    const item = await w.claimed({
      jobId: null,
      dedupeKey: 'refused:2',
      payload: { ...payload, fallback: { channel: 'C0DOCS', user: 'U0ALICE' } },
    });
    await send(item, claimCovers);
    expect(w.slack.callsTo('chat.postEphemeral').map((c) => c.args)).toEqual([
      expect.objectContaining({ channel: 'C0DOCS', user: 'U0ALICE', text: 'Not here' }),
    ]);
    await expect(send({ ...item, payload }, claimCovers)).rejects.toMatchObject({ code: 'expired_url' });
  });

  it('sends an ephemeral note in its thread, or in the channel', async () => {
    const note = { type: 'ephemeral' as const, channel: 'C0DOCS', user: 'U0ALICE', text: 'Held' };
    await send(
      await w.claimed({ jobId: null, dedupeKey: 'held:job:1', payload: { ...note, threadTs: ROOT } }),
      claimCovers,
    );
    await send(
      await w.claimed({ jobId: null, dedupeKey: 'held:job:2', payload: { ...note, threadTs: null } }),
      claimCovers,
    );
    const sent = w.slack.callsTo('chat.postEphemeral').map((c) => c.args);
    expect(sent[0]).toMatchObject({ channel: 'C0DOCS', user: 'U0ALICE', text: 'Held', thread_ts: ROOT });
    expect(sent[1]?.thread_ts).toBeUndefined();
  });

  it('hands a notification to its sender, which says when it is given up', async () => {
    const item = await w.claimed({
      jobId: null,
      dedupeKey: 'notify:2:7',
      payload: { type: 'notify', channel: 'C0NOTIFY', text: 'Done', eventType: 'docs_agent_notification' },
    });
    expect(await send(item, claimCovers)).toBeUndefined();
    w.slack.fail('chat.postMessage', { error: 'not_in_channel' });
    expect(await send(item, claimCovers)).toBe('not_in_channel');
  });

  it('hands a Workflow Builder step to the step sender, and gives it up without one', async () => {
    const payload: OutboxPayload = {
      type: 'await_job',
      executionId: 'Fx1',
      job: 7,
      deadline: w.clock.at + 60_000,
    };
    const item = await w.claimed({ jobId: null, dedupeKey: 'step-wait:Fx1', payload });
    expect(await send(item, claimCovers)).toEqual({ laterAt: w.clock.at + 10_000 });
    expect(stepItems).toEqual([payload]);
    const without = createSender({
      store: w.store,
      instanceId: 'i-test',
      slack: w.gateway,
      logger: w.logger,
      hints: HINTS,
      now: () => w.clock.at,
    });
    expect(await without(item, claimCovers)).toBe('no_workflow_steps');
  });
});
