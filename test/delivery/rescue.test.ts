import { beforeEach, describe, expect, it } from 'vitest';
import { createRescue } from '../../src/delivery/rescue.js';
import type { NewOutboxItem, OutboxPayload } from '../../src/store/types.js';
import { useDeliveryWorld } from '../helpers/delivery-world.js';
import { outboxOnStandIn } from '../helpers/gateway-on-stand-in.js';

const ROOT = '1700000000.000100';
const held = async () => true;
const lost = async () => false;

const w = useDeliveryWorld();
let rescue: ReturnType<typeof createRescue>;
beforeEach(async () => {
  rescue = createRescue({ slack: w.gateway, store: w.store, logger: w.logger });
});

/** A thread post about run 2 of a job in C0DOCS, claimed for delivery. */
async function threadPost(text = 'Done: <https://github.com/acme/docs/pull/7|the pull request>') {
  const job = await w.job({ phase: 'idle', threadTs: ROOT, cardTs: ROOT });
  const item: NewOutboxItem = {
    jobId: job.id,
    dedupeKey: `outcome:2:${job.id}`,
    payload: {
      type: 'post',
      channel: 'C0DOCS',
      threadTs: ROOT,
      text,
      eventType: 'docs_agent_post',
      about: { kind: 'outcome', run: 2, source: null },
    },
  };
  return w.claimed(item);
}

describe('rescuing a thread post Slack refused for good', () => {
  it('posts a text refused as too long again, shortened, in its thread, with its metadata', async () => {
    const item = await threadPost(`Done. ${'A long summary line. '.repeat(400)}`);
    expect(await rescue(item, 'msg_too_long', held)).toBe('delivered');
    const [posted] = w.slack.threadPosts(ROOT);
    expect(posted?.text.length).toBeLessThanOrEqual(3_000);
    expect(posted?.text.startsWith('Done. A long summary line.')).toBe(true);
    expect(posted?.metadata).toEqual({
      event_type: 'docs_agent_post',
      event_payload: { kind: 'outcome', run: 2, thread: ROOT, key: item.dedupeKey },
    });
  });

  it.each(['channel_not_found', 'not_in_channel', 'is_archived'])(
    'tells the requester directly when the thread is closed to the bot (%s)',
    async (code) => {
      const item = await threadPost();
      expect(await rescue(item, code, held)).toBe('delivered');
      expect(w.slack.callsTo('chat.postMessage')).toHaveLength(1);
      const [dm] = w.slack.messages;
      expect(dm?.channel).toBe('U0ALICE');
      expect(dm?.thread_ts).toBeUndefined();
      expect(dm?.text).toBe(
        `:information_source: I could not post in the job's thread in <#C0DOCS> (Slack said \`${code}\`), so here it is directly:\n` +
          'Done: <https://github.com/acme/docs/pull/7|the pull request>',
      );
      // The metadata still names the thread, so a re-post after a crash finds it.
      expect(dm?.metadata?.event_payload).toMatchObject({ thread: ROOT, key: item.dedupeKey, run: 2 });
      expect(w.logged('thread unavailable; told the requester directly')).toHaveLength(1);
    },
  );

  it('does not post once the claim was taken over', async () => {
    const item = await threadPost();
    expect(await rescue(item, 'msg_too_long', lost)).toBe('claim_lost');
    expect(await rescue(item, 'is_archived', lost)).toBe('claim_lost');
    expect(w.slack.callsTo('chat.postMessage')).toEqual([]);
  });

  it('leaves any other refusal alone', async () => {
    const item = await threadPost();
    for (const code of ['invalid_blocks', 'invalid_auth', 'missing_scope', 'message_not_found'])
      expect(await rescue(item, code, held)).toBe('not_rescued');
    expect(w.slack.calls).toEqual([]);
  });

  it('rescues only thread posts, and sends one to the requester only for a job it can still read', async () => {
    const item = await threadPost();
    const reaction: OutboxPayload = { type: 'reaction', channel: 'C0DOCS', ts: ROOT, name: 'eyes' };
    expect(await rescue({ ...item, payload: reaction }, 'not_in_channel', held)).toBe('not_rescued');
    expect(await rescue({ ...item, jobId: null }, 'not_in_channel', held)).toBe('not_rescued');
    // Shortening needs no job: the post itself says where it goes.
    expect(await rescue({ ...item, jobId: null }, 'msg_too_long', held)).toBe('delivered');
    expect(await rescue({ ...item, jobId: 9_999 }, 'not_in_channel', held)).toBe('not_rescued');
    expect(w.slack.messages.map((m) => m.channel)).toEqual(['C0DOCS']);
  });

  it('gives up quietly when the rescue itself is refused, so the item is given up as it was', async () => {
    const item = await threadPost();
    w.slack.fail('chat.postMessage', { error: 'user_not_found' }, { error: 'msg_too_long' });
    expect(await rescue(item, 'not_in_channel', held)).toBe('not_rescued');
    expect(await rescue(item, 'msg_too_long', held)).toBe('not_rescued');
    expect(w.slack.messages).toEqual([]);
    expect(w.logged('rescue of a refused message failed')).toHaveLength(2);
  });
});

describe('a rescue, as the outbox on the Slack stand-in uses it', () => {
  const rowOf = (id: number) =>
    w.store.db.prepare('SELECT delivered_at, dead_at, last_error FROM outbox WHERE id = ?').get(id) as {
      delivered_at: number | null;
      dead_at: number | null;
      last_error: string | null;
    };

  it('records a post told to the requester as delivered, naming why it was not in its thread', async () => {
    const item = await threadPost();
    w.slack.fail('chat.postMessage', { error: 'not_in_channel' });
    await outboxOnStandIn(w.store, w).deliver(item);
    expect(rowOf(item.id)).toMatchObject({ dead_at: null, last_error: 'not_in_channel' });
    expect(rowOf(item.id).delivered_at).not.toBeNull();
    expect(w.slack.messages.map((m) => m.channel)).toEqual(['U0ALICE']);
  });

  it('leaves a refusal no rescue helps to be given up, and one that may pass to be retried', async () => {
    const refused = await threadPost();
    w.slack.fail('chat.postMessage', { error: 'invalid_blocks' });
    await outboxOnStandIn(w.store, w).deliver(refused);
    expect(rowOf(refused.id)).toMatchObject({ delivered_at: null, last_error: 'invalid_blocks' });
    expect(rowOf(refused.id).dead_at).not.toBeNull();

    const limited = await w.claimed({
      jobId: refused.jobId,
      dedupeKey: 'outcome:3:1',
      payload: refused.payload,
    });
    w.slack.fail('chat.postMessage', { error: 'ratelimited' });
    await outboxOnStandIn(w.store, w).deliver(limited);
    expect(rowOf(limited.id)).toMatchObject({ delivered_at: null, dead_at: null, last_error: 'ratelimited' });
    expect(w.slack.messages).toEqual([]);
  });
});
