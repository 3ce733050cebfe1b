import { beforeEach, describe, expect, it } from 'vitest';
import { threadPost } from '../../../src/delivery/kinds/thread-post.js';
import { ClaimLost } from '../../../src/delivery/outbox-kind.js';
import { createSender, keys, type Sender } from '../../../src/delivery/outbox-registry.js';
import { md } from '../../../src/slack/mrkdwn.js';
import type { JobRecord, OutboxItem, RunRecord } from '../../../src/store/types.js';
import { useDeliveryWorld } from '../../helpers/delivery-world.js';

type ThreadPostItem = ReturnType<typeof threadPost>;

const job = {
  id: 7,
  channelId: 'C0DOCS',
  threadTs: '1700000000.000100',
  cardTs: '1700000000.000100',
  origin: 'command',
  privacy: 'public',
} as JobRecord;
const run = (id: number, seq: number, messageTs: string | null) => ({ id, seq, messageTs }) as RunRecord;

const ROOT = '1700000000.000100';
const claimCovers = async () => true;

const w = useDeliveryWorld();
let sender: Sender;
beforeEach(() => {
  sender = createSender(w.sendDeps());
});
const send = (item: OutboxItem<ThreadPostItem['payload']>, covers = claimCovers) => sender.send(item, covers);

const post = (fields: Partial<ThreadPostItem['payload']> = {}): ThreadPostItem => ({
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

describe('a thread post', () => {
  it('is posted in its thread with metadata naming its run and key', async () => {
    await send(await w.claimed(post()));
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
    const item = await w.claimed({ ...post({ blocks }), dedupeKey: null });
    await send(item);
    const [posted] = w.slack.threadPosts(ROOT);
    expect(posted?.blocks).toEqual(blocks);
    expect(posted?.metadata?.event_payload.key).toBe(`outbox-${item.id}`);
  });

  it('is not posted again when an attempt that never recorded its answer had posted it', async () => {
    const item = await w.claimed(post());
    await send(item);
    await send({ ...item, attempts: 2 });
    expect(w.slack.callsTo('conversations.replies')).toHaveLength(1);
    expect(w.slack.threadPosts(ROOT)).toHaveLength(1);
  });

  it('is posted by a later attempt that finds no copy, if the claim still holds after looking', async () => {
    const item = { ...(await w.claimed(post())), attempts: 2 };
    let checks = 0;
    // Held for the start of the attempt, lost while looking.
    await expect(send(item, async () => ++checks === 1)).rejects.toBeInstanceOf(ClaimLost);
    expect(w.slack.callsTo('chat.postMessage')).toEqual([]);
    await send(item);
    expect(w.slack.threadPosts(ROOT)).toHaveLength(1);
  });

  it('waits when Slack cannot say now whether it has a copy, and posts when it never can', async () => {
    const item = { ...(await w.claimed(post())), attempts: 2 };
    w.slack.fail('conversations.replies', { error: 'ratelimited' }, { error: 'missing_scope' });
    await expect(send(item)).rejects.toMatchObject({ code: 'ratelimited' });
    expect(w.slack.callsTo('chat.postMessage')).toEqual([]);
    await send(item);
    expect(w.slack.threadPosts(ROOT)).toHaveLength(1);
  });

  it('passes Slack’s refusal on to the outbox, which decides about it', async () => {
    const item = await w.claimed(post());
    w.slack.fail('chat.postMessage', { error: 'not_in_channel' }, { error: 'invalid_auth' });
    await expect(send(item)).rejects.toMatchObject({ code: 'not_in_channel', permanent: true });
    await expect(send(item)).rejects.toMatchObject({ code: 'invalid_auth', permanent: false });
  });
});

describe('a thread post queued', () => {
  it('queue a thread post with its key, its run and the runs merged into it', () => {
    const item = threadPost({
      job,
      key: keys.outcome({ jobId: job.id, runSeq: 3 }),
      kind: 'outcome',
      text: md`done`,
      run: run(43, 3, '1700000000.000300'),
      covers: [run(42, 2, '1700000000.000200'), run(43, 3, '1700000000.000300')],
      blocks: [{ type: 'divider' }],
    });
    expect(item).toEqual({
      jobId: 7,
      dedupeKey: 'outcome:3:7',
      payload: {
        type: 'post',
        channel: 'C0DOCS',
        threadTs: '1700000000.000100',
        text: 'done',
        blocks: [{ type: 'divider' }],
        eventType: 'docs_agent_post',
        about: {
          kind: 'outcome',
          run: 3,
          source: '1700000000.000300',
          covers: '2,3',
          sources: '1700000000.000200,1700000000.000300',
        },
      },
    });
  });

  it('keep the place of a merged run that came with no message (a follow-up from a form)', () => {
    const item = threadPost({
      job,
      key: keys.outcome({ jobId: job.id, runSeq: 2 }),
      kind: 'outcome',
      text: md`done`,
      run: run(42, 2, '1700000000.000200'),
      covers: [run(41, 1, null), run(42, 2, '1700000000.000200')],
    });
    expect(item.payload).toMatchObject({ about: { covers: '1,2', sources: ',1700000000.000200' } });
  });

  it('queue a notice about no run, and no list of merged runs for a single one', () => {
    const notice = threadPost({ job, key: keys.startError({ jobId: 7 }), kind: 'notice', text: md`no` });
    expect(notice.payload).toEqual({
      type: 'post',
      channel: 'C0DOCS',
      threadTs: '1700000000.000100',
      text: 'no',
      eventType: 'docs_agent_post',
      about: { kind: 'notice', run: null, source: null },
    });
    const single = threadPost({
      job,
      key: keys.outcome({ jobId: 7, runSeq: 1 }),
      kind: 'outcome',
      text: md`done`,
      run: run(41, 1, null),
      covers: [run(41, 1, null)],
    });
    expect(single.payload).toMatchObject({ about: { kind: 'outcome', run: 1, source: null } });
    expect(single.payload.type === 'post' && single.payload.about).not.toHaveProperty('covers');
    expect(single.payload).not.toHaveProperty('blocks');
  });
});
