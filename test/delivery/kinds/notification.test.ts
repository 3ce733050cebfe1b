import { beforeEach, describe, expect, it } from 'vitest';
import { createNotificationSender, outcomeNotification } from '../../../src/delivery/kinds/notification.js';
import type { KindSender } from '../../../src/delivery/outbox-kind.js';
import { createSender, type OutboxPayload } from '../../../src/delivery/outbox-registry.js';
import { md } from '../../../src/slack/mrkdwn.js';
import type { JobRecord, OutboxItem, RunRecord } from '../../../src/store/types.js';
import { useDeliveryWorld } from '../../helpers/delivery-world.js';

type Notification = Extract<OutboxPayload, { type: 'notify' | 'direct' }>;

const claimCovers = async () => true;
const w = useDeliveryWorld();
let sender: KindSender<Notification>;
beforeEach(async () => {
  sender = createNotificationSender({ slack: w.gateway, logger: w.logger });
});

const common = {
  text: 'A pull request is ready: <https://github.com/acme/docs/pull/7|acme/docs#7>',
  eventType: 'docs_agent_notification',
  fields: { run: 2, outcome: 'completed_pr', thread: '1700000000.000100' },
};
const toChannel: Notification = { type: 'notify', channel: 'C0NOTIFY', ...common };
const toRequester: Notification = { type: 'direct', user: 'U0ALICE', ...common };

let queued = 6;
/** The item claimed for its first attempt (`attempts` more for a later one). */
async function item(payload: Notification, attempts = 1): Promise<OutboxItem<Notification>> {
  const claimed = await w.claimed({ jobId: null, dedupeKey: `notify:2:${++queued}`, payload });
  return { ...claimed, attempts, payload };
}

describe('an outcome told in the notification channel', () => {
  it('is a top-level post whose metadata names the run and its key', async () => {
    const sent = await item(toChannel);
    expect(await sender.send(sent, claimCovers)).toBeUndefined();
    expect(w.slack.messages).toHaveLength(1);
    expect(w.slack.messages[0]).toMatchObject({
      channel: 'C0NOTIFY',
      text: common.text,
      metadata: {
        event_type: 'docs_agent_notification',
        event_payload: { ...common.fields, key: sent.dedupeKey },
      },
    });
    expect(w.slack.messages[0]?.thread_ts).toBeUndefined();
  });

  it('is not posted twice: a later attempt finds the first one in the channel', async () => {
    const sent = await item(toChannel);
    await sender.send(sent, claimCovers);
    expect(await sender.send({ ...sent, attempts: 2 }, claimCovers)).toBeUndefined();
    expect(w.slack.callsTo('conversations.history')).toHaveLength(1);
    expect(w.slack.messages).toHaveLength(1);
  });

  it('looks only as far back as the item, with a margin for clocks', async () => {
    const sent = await item(toChannel);
    await sender.send(sent, claimCovers);
    // Queued an hour after the copy Slack has: that copy is not this item's.
    const later = { ...sent, attempts: 2, createdAt: Date.now() + 3_600_000 };
    await sender.send(later, claimCovers);
    expect(w.slack.callsTo('conversations.history')[0]?.args.oldest).toBe(
      String(Math.floor(later.createdAt / 1000) - 300),
    );
    expect(w.slack.messages).toHaveLength(2);
  });

  it('asks again later rather than risk a second copy when the history cannot be read now', async () => {
    const sent = await item(toChannel, 2);
    w.slack.fail('conversations.history', { error: 'ratelimited' });
    await expect(sender.send(sent, claimCovers)).rejects.toMatchObject({ code: 'ratelimited' });
    expect(w.slack.callsTo('chat.postMessage')).toEqual([]);
  });

  it('posts anyway when the history can never be read (a scope the app lacks)', async () => {
    const sent = await item(toChannel, 2);
    w.slack.fail('conversations.history', { error: 'missing_scope' });
    expect(await sender.send(sent, claimCovers)).toBeUndefined();
    expect(w.slack.messages).toHaveLength(1);
  });

  it('is given up while the channel is closed to the bot, warned once per channel and reason', async () => {
    const sent = await item(toChannel);
    w.slack.fail('chat.postMessage', { error: 'not_in_channel' }, { error: 'not_in_channel' });
    w.slack.fail('chat.postMessage', { error: 'is_archived' }, { error: 'channel_not_found' });
    expect(await sender.send(sent, claimCovers)).toBe('not_in_channel');
    expect(await sender.send(sent, claimCovers)).toBe('not_in_channel');
    expect(await sender.send(sent, claimCovers)).toBe('is_archived');
    const other = { ...sent.payload, channel: 'C0OTHER' };
    expect(await sender.send({ ...sent, payload: other }, claimCovers)).toBe('channel_not_found');
    const warned = w.logs.filter((l) => l.includes('NOTIFY_CHANNEL_ID') && l.includes('"warn"'));
    expect(warned.map((l) => JSON.parse(l).code)).toEqual([
      'not_in_channel',
      'is_archived',
      'channel_not_found',
    ]);
    expect(w.logs.filter((l) => l.includes('NOTIFY_CHANNEL_ID'))).toHaveLength(4);
  });

  it('is tried again after a refusal that may pass, or one that is not about the channel', async () => {
    const sent = await item(toChannel);
    w.slack.fail('chat.postMessage', { error: 'ratelimited' }, { status: 500 }, { error: 'invalid_auth' });
    for (const code of ['ratelimited', 'http_500', 'invalid_auth'])
      await expect(sender.send(sent, claimCovers)).rejects.toMatchObject({ name: 'SlackCallError', code });
    // A person's reasons are not the channel's: still thrown for a channel post.
    w.slack.fail('chat.postMessage', { error: 'user_not_found' });
    await expect(sender.send(sent, claimCovers)).rejects.toMatchObject({ code: 'user_not_found' });
  });
});

describe('an outcome sent to the requester directly', () => {
  it('opens their direct message and posts in it', async () => {
    const sent = await item(toRequester);
    expect(await sender.send(sent, claimCovers)).toBeUndefined();
    expect(w.slack.callsTo('conversations.open')[0]?.args.users).toBe('U0ALICE');
    expect(w.slack.messages).toMatchObject([
      { channel: 'D0ALICE', text: common.text, metadata: { event_type: 'docs_agent_notification' } },
    ]);
  });

  it('sends its blocks, and finds a copy already sent in the direct message', async () => {
    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: 'A pull request is ready' } }];
    const sent = await item({ ...toRequester, blocks });
    await sender.send(sent, claimCovers);
    await sender.send({ ...sent, attempts: 3 }, claimCovers);
    expect(w.slack.messages).toHaveLength(1);
    expect(w.slack.messages[0]?.blocks).toEqual(blocks);
    expect(w.slack.callsTo('conversations.history')[0]?.args.channel).toBe('D0ALICE');
  });

  it('is given up when the person cannot get one', async () => {
    const gone = await item({ ...toRequester, user: 'U0GONE1' });
    expect(await sender.send(gone, claimCovers)).toBe('user_not_found');
    const sent = await item(toRequester);
    w.slack.fail('chat.postMessage', { error: 'cannot_dm_bot' }, { error: 'user_disabled' });
    expect(await sender.send(sent, claimCovers)).toBe('cannot_dm_bot');
    expect(await sender.send(sent, claimCovers)).toBe('user_disabled');
    w.slack.fail('conversations.open', { error: 'channel_not_found' });
    expect(await sender.send(sent, claimCovers)).toBe('channel_not_found');
    expect(w.logged('cannot send the requester a direct message')).toHaveLength(4);
    expect(w.slack.messages).toEqual([]);
  });

  it('is tried again when Slack may take it later', async () => {
    const sent = await item(toRequester);
    w.slack.fail('conversations.open', { error: 'ratelimited' });
    await expect(sender.send(sent, claimCovers)).rejects.toMatchObject({ code: 'ratelimited' });
    w.slack.fail('chat.postMessage', { status: 503 });
    await expect(sender.send(sent, claimCovers)).rejects.toMatchObject({ code: 'http_503' });
    expect(w.slack.messages).toEqual([]);
  });
});

describe('an outcome told outside its thread, queued', () => {
  const job = {
    id: 7,
    channelId: 'C0DOCS',
    threadTs: '1700000000.000100',
    cardTs: '1700000000.000100',
    origin: 'command',
    privacy: 'public',
  } as JobRecord;
  const run = (id: number, seq: number, messageTs: string | null) => ({ id, seq, messageTs }) as RunRecord;

  it('goes to the channel or the requester under its own key, its metadata naming the run and thread', () => {
    const toChannel = outcomeNotification({
      job,
      run: run(41, 2, null),
      outcome: 'completed_pr',
      to: { channel: 'C0NOTIFY' },
      text: md`pr`,
    });
    const toRequester = outcomeNotification({
      job,
      run: run(41, 2, null),
      outcome: 'failed',
      to: { user: 'U0ALICE' },
      text: md`failed`,
      blocks: [{ type: 'divider' }],
    });
    expect([toChannel, toRequester].map((i) => i.dedupeKey)).toEqual(['notify:2:7', 'requester-dm:2:7']);
    expect(toChannel.payload).toEqual({
      type: 'notify',
      channel: 'C0NOTIFY',
      text: 'pr',
      eventType: 'docs_agent_notification',
      fields: { run: 2, outcome: 'completed_pr', thread: '1700000000.000100' },
    });
    expect(toRequester.payload).toMatchObject({
      type: 'direct',
      user: 'U0ALICE',
      blocks: [{ type: 'divider' }],
    });
  });

  it('name the thread in a notification only where the job may be shown', () => {
    const fieldsOf = (j: JobRecord, to: { channel: string } | { user: string }) => {
      const item = outcomeNotification({ job: j, run: run(41, 2, null), outcome: 'failed', to, text: md`x` });
      return item.payload.type === 'notify' || item.payload.type === 'direct'
        ? item.payload.fields
        : undefined;
    };
    const hidden = { ...job, privacy: 'private', requesterId: 'U0ALICE' } as JobRecord;
    expect(fieldsOf(job, { channel: 'C0NOTIFY' })).toEqual({
      run: 2,
      outcome: 'failed',
      thread: job.threadTs,
    });
    expect(fieldsOf(hidden, { channel: 'C0NOTIFY' })?.thread).toBeNull();
    expect(fieldsOf({ ...hidden, privacy: 'unknown' }, { channel: 'C0NOTIFY' })?.thread).toBeNull();
    // The job's own channel, and its requester, may see where it lives.
    expect(fieldsOf(hidden, { channel: 'C0DOCS' })?.thread).toBe(job.threadTs);
    expect(fieldsOf(hidden, { user: 'U0ALICE' })?.thread).toBe(job.threadTs);
  });
});

describe('a notification handed to the outbox', () => {
  it('goes to its sender, which says when it is given up', async () => {
    const send = createSender(w.sendDeps()).send;
    const item = await w.claimed({
      jobId: null,
      dedupeKey: 'notify:2:7',
      payload: {
        type: 'notify' as const,
        channel: 'C0NOTIFY',
        text: 'Done',
        eventType: 'docs_agent_notification',
      },
    });
    expect(await send(item, claimCovers)).toBeUndefined();
    w.slack.fail('chat.postMessage', { error: 'not_in_channel' });
    expect(await send(item, claimCovers)).toBe('not_in_channel');
  });
});
