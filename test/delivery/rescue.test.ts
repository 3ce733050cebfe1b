import { beforeEach, describe, expect, it } from 'vitest';
import type { ThreadPostPayload } from '../../src/delivery/kinds/thread-post.js';
import { createRescue, rescueIntro } from '../../src/delivery/rescue.js';
import { recordedMrkdwn } from '../../src/slack/mrkdwn.js';
import type { NewOutboxItem } from '../../src/store/types.js';
import { useDeliveryWorld } from '../helpers/delivery-world.js';

const ROOT = '1700000000.000100';
const claimCovers = async () => true;
const lost = async () => false;

const w = useDeliveryWorld();
let rescue: ReturnType<typeof createRescue>;
beforeEach(async () => {
  rescue = createRescue({ slack: w.gateway, store: w.store, logger: w.logger });
});

const DONE = 'Done: <https://github.com/acme/docs/pull/7|the pull request>';
const BLOCKS = [{ type: 'section', text: { type: 'mrkdwn', text: DONE } }];

/** A thread post about run 2 of a job in C0DOCS, claimed for delivery. */
async function threadPost(text = DONE, blocks?: unknown[]) {
  const job = await w.job({ phase: 'idle', threadTs: ROOT, cardTs: ROOT });
  const item: NewOutboxItem<ThreadPostPayload> = {
    jobId: job.id,
    dedupeKey: `outcome:2:${job.id}`,
    payload: {
      type: 'post',
      channel: 'C0DOCS',
      threadTs: ROOT,
      text,
      eventType: 'docs_agent_post',
      about: { kind: 'outcome', run: 2, source: null },
      ...(blocks ? { blocks } : {}),
    },
  };
  return w.claimed(item);
}

describe('rescuing a thread post Slack refused for good', () => {
  it('posts a text refused as too long again, shortened, in its thread, with its metadata', async () => {
    const item = await threadPost(`Done. ${'A long summary line. '.repeat(400)}`);
    expect(await rescue(item, 'msg_too_long', claimCovers)).toBe('delivered');
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
      expect(await rescue(item, code, claimCovers)).toBe('delivered');
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
    for (const code of ['restricted_action', 'invalid_auth', 'missing_scope', 'message_not_found'])
      expect(await rescue(item, code, claimCovers)).toBe('not_rescued');
    expect(w.slack.calls).toEqual([]);
  });

  it('sends a post to the requester only for a job it can still read', async () => {
    const item = await threadPost();
    expect(await rescue({ ...item, jobId: null }, 'not_in_channel', claimCovers)).toBe('not_rescued');
    // Shortening needs no job: the post itself says where it goes.
    expect(await rescue({ ...item, jobId: null }, 'msg_too_long', claimCovers)).toBe('delivered');
    expect(await rescue({ ...item, jobId: 9_999 }, 'not_in_channel', claimCovers)).toBe('not_rescued');
    expect(w.slack.messages.map((m) => m.channel)).toEqual(['C0DOCS']);
  });

  it('gives up quietly when the rescue itself is refused, so the item is given up as it was', async () => {
    const item = await threadPost();
    w.slack.fail('chat.postMessage', { error: 'user_not_found' }, { error: 'msg_too_long' });
    expect(await rescue(item, 'not_in_channel', claimCovers)).toBe('not_rescued');
    expect(await rescue(item, 'msg_too_long', claimCovers)).toBe('not_rescued');
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
    await w.outboxOn(w.store).deliver(item);
    expect(rowOf(item.id)).toMatchObject({ dead_at: null, last_error: 'not_in_channel' });
    expect(rowOf(item.id).delivered_at).not.toBeNull();
    expect(w.slack.messages.map((m) => m.channel)).toEqual(['U0ALICE']);
  });

  it('leaves a refusal no rescue helps to be given up, and one that may pass to be retried', async () => {
    const refused = await threadPost();
    w.slack.fail('chat.postMessage', { error: 'restricted_action' });
    await w.outboxOn(w.store).deliver(refused);
    expect(rowOf(refused.id)).toMatchObject({ delivered_at: null, last_error: 'restricted_action' });
    expect(rowOf(refused.id).dead_at).not.toBeNull();

    const limited = await w.claimed({
      jobId: refused.jobId,
      dedupeKey: 'outcome:3:1',
      payload: refused.payload,
    });
    w.slack.fail('chat.postMessage', { error: 'ratelimited' });
    await w.outboxOn(w.store).deliver(limited);
    expect(rowOf(limited.id)).toMatchObject({ delivered_at: null, dead_at: null, last_error: 'ratelimited' });
    expect(w.slack.messages).toEqual([]);
  });
});

describe('a post whose blocks or metadata Slack refused, sent again as plain text', () => {
  const rowOf = (id: number) =>
    w.store.db.prepare('SELECT delivered_at, dead_at, last_error FROM outbox WHERE id = ?').get(id) as {
      delivered_at: number | null;
      dead_at: number | null;
      last_error: string | null;
    };

  it.each(['invalid_blocks', 'invalid_blocks_format', 'msg_blocks_too_long'])(
    'is posted again without its blocks, with its metadata, when Slack answers %s',
    async (code) => {
      const item = await threadPost(DONE, BLOCKS);
      w.slack.fail('chat.postMessage', { error: code });
      await w.outboxOn(w.store).deliver(item);
      expect(rowOf(item.id)).toMatchObject({ dead_at: null, last_error: code });
      expect(rowOf(item.id).delivered_at).not.toBeNull();
      // One more post than usual, and only because Slack refused the first.
      expect(w.slack.callsTo('chat.postMessage').map((c) => c.args.blocks !== undefined)).toEqual([
        true,
        false,
      ]);
      const [posted] = w.slack.threadPosts(ROOT);
      expect(posted).toMatchObject({ text: DONE, metadata: { event_type: 'docs_agent_post' } });
      expect(posted?.blocks).toBeUndefined();
      expect(posted?.metadata?.event_payload.key).toBe(item.dedupeKey);
      expect(w.logged('it was sent as plain text')).toHaveLength(1);

      // A later attempt (a restart before the delivery was recorded) finds it by its metadata.
      await w.outboxOn(w.store).deliver({ ...item, attempts: 2 });
      expect(w.slack.threadPosts(ROOT)).toHaveLength(1);
    },
  );

  it.each(['invalid_metadata_format', 'invalid_metadata_schema', 'metadata_too_large'])(
    'is posted again without blocks or metadata when Slack answers %s',
    async (code) => {
      const item = await threadPost(DONE, BLOCKS);
      w.slack.fail('chat.postMessage', { error: code });
      await w.outboxOn(w.store).deliver(item);
      expect(rowOf(item.id)).toMatchObject({ dead_at: null, last_error: code });
      expect(w.slack.callsTo('chat.postMessage')).toHaveLength(2);
      const [posted] = w.slack.threadPosts(ROOT);
      expect(posted?.text).toBe(DONE);
      expect(posted?.blocks).toBeUndefined();
      expect(posted?.metadata).toBeUndefined();
      expect(w.logged('it was sent without, and is found by its text')).toHaveLength(1);
      // The first attempt looks for nothing: nothing can be there yet.
      expect(w.slack.callsTo('conversations.replies')).toEqual([]);
    },
  );

  it('drops the metadata too when Slack refuses it on the plain re-send', async () => {
    const item = await threadPost(DONE, BLOCKS);
    // The post was refused for its blocks; its plain re-send, for its metadata.
    w.slack.fail('chat.postMessage', { error: 'invalid_metadata_format' });
    expect(await rescue(item, 'invalid_blocks', claimCovers)).toBe('delivered');
    expect(w.slack.callsTo('chat.postMessage')).toHaveLength(2);
    expect(w.slack.threadPosts(ROOT)).toMatchObject([{ text: DONE }]);
    expect(w.slack.threadPosts(ROOT)[0]?.metadata).toBeUndefined();
  });

  it('is not posted twice when a restart delivers it again: it is found by its text', async () => {
    const item = await threadPost(DONE, BLOCKS);
    // The first attempt posted it without metadata, and stopped before recording so.
    expect(await rescue(item, 'invalid_metadata_format', claimCovers)).toBe('delivered');
    w.slack.fail('chat.postMessage', { error: 'invalid_metadata_format' });
    await w.outboxOn(w.store).deliver({ ...item, attempts: 2 });
    expect(rowOf(item.id).delivered_at).not.toBeNull();
    expect(w.slack.threadPosts(ROOT)).toHaveLength(1);
    // Looked for by metadata (the usual look), then by text: none of it on the first attempt.
    expect(w.slack.callsTo('conversations.replies')).toHaveLength(2);
    expect(w.slack.callsTo('conversations.replies')[1]?.args).toMatchObject({
      ts: ROOT,
      include_all_metadata: 'true',
    });
  });

  it('takes neither a person’s quote nor the bot’s post with metadata for the one it looks for', async () => {
    const item = await threadPost(DONE, BLOCKS);
    w.slack.humans.push({
      channel: 'C0DOCS',
      ts: '1700000000.000150',
      thread_ts: ROOT,
      user: 'U0BOB',
      text: DONE,
    });
    await w.gateway.postMessage({
      channel: 'C0DOCS',
      threadTs: ROOT,
      text: recordedMrkdwn(DONE),
      metadata: { eventType: 'docs_agent_post', key: 'outcome:1:1' },
    });
    expect(await rescue({ ...item, attempts: 2 }, 'invalid_metadata_format', claimCovers)).toBe('delivered');
    expect(w.slack.threadPosts(ROOT).filter((m) => m.metadata === undefined)).toHaveLength(1);
  });

  it('is posted anyway when Slack can never say whether it is there, and asked again when it cannot say now', async () => {
    const item = { ...(await threadPost(DONE, BLOCKS)), attempts: 2 };
    w.slack.fail('conversations.replies', { error: 'ratelimited' }, { error: 'missing_scope' });
    expect(await rescue(item, 'invalid_metadata_format', claimCovers)).toBe('retry');
    expect(w.slack.threadPosts(ROOT)).toEqual([]);
    expect(await rescue(item, 'invalid_metadata_format', claimCovers)).toBe('delivered');
    expect(w.slack.threadPosts(ROOT)).toHaveLength(1);
  });

  it('is tried again later when the re-send meets a refusal that may pass, never given up', async () => {
    const item = await threadPost(DONE, BLOCKS);
    w.slack.fail('chat.postMessage', { error: 'invalid_blocks' }, { status: 503 });
    await w.outboxOn(w.store).deliver(item);
    expect(rowOf(item.id)).toMatchObject({ delivered_at: null, dead_at: null, last_error: 'invalid_blocks' });
    expect(w.slack.threadPosts(ROOT)).toEqual([]);
    expect(await rescue({ ...item, attempts: 2 }, 'invalid_blocks', claimCovers)).toBe('delivered');
    expect(w.slack.threadPosts(ROOT)).toHaveLength(1);
  });

  it('does not post once the claim was taken over', async () => {
    const item = await threadPost(DONE, BLOCKS);
    expect(await rescue(item, 'invalid_blocks', lost)).toBe('claim_lost');
    expect(await rescue({ ...item, attempts: 2 }, 'invalid_metadata_format', lost)).toBe('claim_lost');
    expect(w.slack.callsTo('chat.postMessage')).toEqual([]);
  });
});

describe('rescueIntro', () => {
  it("names the job's channel as a link and what Slack said", () => {
    expect(rescueIntro('C0DOCS', 'channel_not_found')).toBe(
      ":information_source: I could not post in the job's thread in <#C0DOCS> (Slack said `channel_not_found`), so here it is directly:",
    );
  });

  it('shows what is not a channel id as inert text, never as a mention or a link', () => {
    const intro = rescueIntro('<!channel>', '<@U0EVE> `x`');
    expect(intro).toContain('in &lt;!channel&gt; (Slack said');
    expect(intro).toContain("`&lt;@U0EVE&gt; 'x'`");
    expect(intro).not.toMatch(/<[!@]/);
    // A user id is not a conversation: it is not linked either.
    expect(rescueIntro('U0EVE', 'is_archived')).toContain('in U0EVE (');
  });
});
