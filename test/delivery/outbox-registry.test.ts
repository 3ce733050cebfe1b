import { afterEach, describe, expect, it } from 'vitest';
import { CARD_EVENT_TYPE, cardKey, cardMetadata, cardUpdate } from '../../src/delivery/kinds/card-update.js';
import { NOTIFICATION_EVENT_TYPE, outcomeNotification } from '../../src/delivery/kinds/notification.js';
import { privateNote } from '../../src/delivery/kinds/private-note.js';
import { receivedReaction } from '../../src/delivery/kinds/reaction.js';
import { POST_EVENT_TYPE, threadPost, threadPosts } from '../../src/delivery/kinds/thread-post.js';
import { ClaimLost, unkeyedPostKey } from '../../src/delivery/outbox-kind.js';
import {
  BOT_EVENT_TYPES,
  createSender,
  keys,
  OUTBOX_ITEMS,
  type OutboxPayload,
  parseOutboxPayload,
} from '../../src/delivery/outbox-registry.js';
import { md } from '../../src/slack/mrkdwn.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { JobRecord, NewOutboxItem, RunRecord } from '../../src/store/types.js';
import { useDeliveryWorld } from '../helpers/delivery-world.js';
import { waitFor } from '../helpers/http.js';

type Keys = typeof keys;

/**
 * Every named item's key from sample arguments, and the text earlier releases wrote for it. Typed
 * over every keyed item, and checked to cover them all at run time too: a new item cannot go unpinned.
 */
const PINNED: { [K in keyof Keys]: [Parameters<Keys[K]>[0], string] } = {
  outcome: [{ jobId: 7, runSeq: 2 }, 'outcome:2:7'],
  startError: [{ jobId: 7 }, 'start-error:7'],
  startUnknown: [{ jobId: 7 }, 'start-unknown:7'],
  pollRefused: [{ jobId: 7, runCount: 3 }, 'poll-refused:3:7'],
  followUpError: [{ jobId: 7, runId: 41 }, 'followup-error:41:7'],
  followUpShown: [{ jobId: 7, runId: 41 }, 'followup-shown:41:7'],
  followUpUnknown: [{ jobId: 7, runId: 41 }, 'followup-unknown:41:7'],
  stopped: [{ jobId: 7, run: 2, first: 41 }, 'stopped:2:41:7'],
  pullRequestEnded: [{ jobId: 7, pullRequestId: 3 }, 'pull-request-ended:3:7'],
  stopRefused: [{ jobId: 7, eventTs: '1783536983.783769' }, 'stop-refused:1783536983.783769:7'],
  startRefused: [{ jobId: 7 }, 'start-refused:7'],
  refused: [{ jobId: 7 }, 'refused:7'],
  restartRefused: [{ jobId: 7 }, 'restart-refused:7'],
  dropped: [{ runId: 41 }, 'dropped:41'],
  held: [{ kind: 'job', id: 7 }, 'held:job:7'],
  editedLate: [{ runId: 41, version: '1700000300.000200' }, 'edited-late:41:1700000300.000200'],
  deletedLate: [{ runId: 41 }, 'deleted-late:41'],
  editRefused: [{ runId: 41, version: '1700000300.000200' }, 'edit-refused:41:1700000300.000200'],
  withdrawn: [{ runId: 41 }, 'withdrawn:41'],
  filesUnseen: [{ channelId: 'C0DOCS', messageTs: '1700000300.000100' }, 'files:C0DOCS:1700000300.000100'],
  received: [{ runId: 41 }, 'received:41'],
  notification: [{ jobId: 7, runSeq: 2 }, 'notify:2:7'],
  requesterDm: [{ jobId: 7, runSeq: 2 }, 'requester-dm:2:7'],
  stepCompleted: [{ executionId: 'Fx0123ABC' }, 'step:Fx0123ABC'],
  stepWait: [{ executionId: 'Fx0123ABC' }, 'step-wait:Fx0123ABC'],
};

describe('outbox item keys', () => {
  // Keys written by one release are read back by the next (unique index, Slack metadata):
  // these texts never change.
  it('are the keys earlier releases wrote, every one of them', () => {
    expect(Object.keys(PINNED).sort()).toEqual(Object.keys(keys).sort());
    for (const [name, [args, key]] of Object.entries(PINNED))
      expect((keys[name as keyof Keys] as (a: typeof args) => string)(args), name).toBe(key);
    expect(keys.held({ kind: 'reply', id: 41 })).toBe('held:reply:41');
    expect(OUTBOX_ITEMS.cardUpdate).toBeNull();
    expect(Object.keys(OUTBOX_ITEMS).sort()).toEqual([...Object.keys(keys), 'cardUpdate'].sort());
    expect(unkeyedPostKey(12)).toBe('outbox-12');
    expect(cardKey(7)).toBe('root:7');
  });

  it('are the metadata event types earlier releases wrote', () => {
    expect(POST_EVENT_TYPE).toBe('docs_agent_post');
    expect(CARD_EVENT_TYPE).toBe('docs_agent_root');
    expect(NOTIFICATION_EVENT_TYPE).toBe('docs_agent_notification');
    expect([...BOT_EVENT_TYPES].sort()).toEqual([
      'docs_agent_notification',
      'docs_agent_post',
      'docs_agent_root',
    ]);
    expect(cardMetadata(7)).toEqual({ eventType: 'docs_agent_root', key: 'root:7' });
    expect(Object.keys(threadPosts.items).sort()).toEqual(
      [
        'followUpError',
        'followUpShown',
        'followUpUnknown',
        'outcome',
        'pollRefused',
        'pullRequestEnded',
        'startError',
        'startUnknown',
        'stopped',
      ].sort(),
    );
    expect(threadPosts.eventType).toBe('docs_agent_post');
  });

  it('name each kind once: no two kinds can make the same key', () => {
    const prefixes = Object.values(PINNED).map(([, key]) => key.split(':')[0]);
    expect(new Set(prefixes).size).toBe(prefixes.length);
  });
});

const T0 = Date.parse('2026-09-01T12:00:00.000Z');

/** One payload of every kind, with every optional field this release writes. */
const EVERY_KIND: OutboxPayload[] = [
  {
    type: 'post',
    channel: 'C0DOCS',
    threadTs: '1700000000.000100',
    text: 'Done',
    eventType: 'docs_agent_post',
    about: { kind: 'outcome', run: 3, source: null, covers: '2,3', sources: ',1700000000.000300' },
    blocks: [{ type: 'divider' }],
  },
  { type: 'update_root', channel: 'C0DOCS', ts: '1700000000.000100' },
  { type: 'reaction', channel: 'C0DOCS', ts: '1700000000.000300', name: 'eyes' },
  {
    type: 'respond',
    responseUrl: 'https://hooks.slack.com/commands/T0TEST/1/not-a-real-secret',
    text: 'Refused',
    fallback: { channel: 'C0DOCS', user: 'U0ALICE' },
  },
  { type: 'ephemeral', channel: 'C0DOCS', user: 'U0ALICE', threadTs: null, text: 'Held' },
  {
    type: 'notify',
    channel: 'C0NOTIFY',
    text: 'A pull request',
    eventType: 'docs_agent_notification',
    fields: { run: 2, outcome: 'completed_pr', thread: null },
  },
  { type: 'direct', user: 'U0ALICE', text: 'Failed', eventType: 'docs_agent_notification' },
  { type: 'complete_step', executionId: 'Fx0123ABC', result: { job: 7, channel: 'C0DOCS', threadTs: '1.2' } },
  { type: 'complete_step', executionId: 'Fx0123ABD', result: { error: 'Not allowed here' } },
  { type: 'await_job', executionId: 'Fx0123ABE', job: 7, deadline: T0 + 60_000 },
];

let store: ReturnType<typeof openSqliteStore> | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

/** Stores `raw` as an outbox row's JSON, as another release may have written it, and claims it back. */
async function readBack(raw: string) {
  store = openSqliteStore(':memory:', { now: () => T0 });
  await store.enqueue([{ jobId: null, dedupeKey: 'k', payload: { type: 'reaction' } as OutboxPayload }], T0);
  store.db.prepare('UPDATE outbox SET payload = ?').run(raw);
  const [item] = await store.claimOutbox('instance-1', T0, 1, 10_000);
  return item?.payload;
}

describe('outbox payloads', () => {
  it('come back from the store as they were written, every kind', async () => {
    store = openSqliteStore(':memory:', { now: () => T0 });
    await store.enqueue(
      EVERY_KIND.map((payload, i) => ({ jobId: null, dedupeKey: `k${i}`, payload })),
      T0,
    );
    const items = await store.claimOutbox('instance-1', T0, 50, 10_000);
    expect(items.map((i) => i.payload)).toEqual(EVERY_KIND);
    for (const item of items)
      expect(parseOutboxPayload(item.payload)).toEqual({ ok: true, payload: item.payload });
  });

  it('read payloads of releases that wrote fewer optional fields', () => {
    const older: unknown[] = [
      { type: 'post', channel: 'C0DOCS', threadTs: '1.2', text: 'Done', eventType: 'docs_agent_post' },
      {
        type: 'post',
        channel: 'C0DOCS',
        threadTs: '1.2',
        text: 'x',
        eventType: 'e',
        about: { kind: 'notice', run: null, source: null },
      },
      { type: 'respond', responseUrl: 'https://hooks.slack.com/x', text: 'Refused' },
      { type: 'notify', channel: 'C0NOTIFY', text: 'pr', eventType: 'docs_agent_notification' },
    ];
    for (const payload of older) expect(parseOutboxPayload(payload)).toEqual({ ok: true, payload });
  });

  it('refuse a stored payload missing what its delivery needs, naming the field', () => {
    const cases: [unknown, string][] = [
      [{ type: 'post', channel: 'C0DOCS', threadTs: '1.2', eventType: 'e' }, 'text'],
      [{ type: 'ephemeral', channel: 'C0DOCS', user: 'U0ALICE', text: 'hi' }, 'threadTs'],
      [{ type: 'reaction', channel: 'C0DOCS', ts: '1.2' }, 'name'],
      [{ type: 'await_job', executionId: 'Fx1', job: '7', deadline: 1 }, 'job'],
      [{ type: 'direct', text: 'hi', eventType: 'e' }, 'user'],
    ];
    for (const [payload, field] of cases) {
      const read = parseOutboxPayload(payload);
      expect(read.ok).toBe(false);
      if (!read.ok) expect(read.error).toContain(field);
    }
  });

  it('refuse hostile shapes instead of delivering them', () => {
    const hostile: unknown[] = [
      null,
      [],
      'post',
      42,
      {},
      { type: 'constructor' },
      { type: 'toString', channel: 'C0DOCS' },
      { type: ['post'], channel: 'C0DOCS', threadTs: '1.2', text: 'x', eventType: 'e' },
      { type: 'post', channel: 'C0DOCS', threadTs: '1.2', text: { toString: 'x' }, eventType: 'e' },
      { type: 'post', channel: 'C0DOCS', threadTs: '1.2', text: 'x', eventType: 'e', blocks: 'not blocks' },
      {
        type: 'post',
        channel: 'C0DOCS',
        threadTs: '1.2',
        text: 'x',
        eventType: 'e',
        about: { kind: 'secret' },
      },
      { type: 'notify', channel: 'C0N', text: 'x', eventType: 'e', fields: { thread: { nested: true } } },
      { type: 'complete_step', executionId: 'Fx1', result: {} },
      {
        type: 'respond',
        responseUrl: 'https://hooks.slack.com/x',
        text: 'x',
        fallback: { channel: 'C0DOCS' },
      },
    ];
    for (const payload of hostile)
      expect(parseOutboxPayload(payload).ok, JSON.stringify(payload)).toBe(false);
  });

  it('carry a stored __proto__ key as data, never onto the prototype', async () => {
    const payload = await readBack(
      '{"type":"reaction","channel":"C0DOCS","ts":"1.2","name":"eyes","__proto__":{"polluted":"yes"}}',
    );
    const read = parseOutboxPayload(payload);
    expect(read.ok).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    if (read.ok) {
      expect(Object.getPrototypeOf(read.payload)).toBe(Object.prototype);
      expect((read.payload as unknown as Record<string, unknown>).polluted).toBeUndefined();
    }
  });

  it('keep fields a later release added, and refuse what they cannot deliver', () => {
    const later = { type: 'reaction', channel: 'C0DOCS', ts: '1.2', name: 'eyes', extra: 1 };
    expect(parseOutboxPayload(later)).toEqual({ ok: true, payload: later });
    expect(parseOutboxPayload({ type: 'post', channel: 'C0DOCS' }).ok).toBe(false);
    expect(parseOutboxPayload({ type: 'teleport' }).ok).toBe(false);
    expect(parseOutboxPayload('not an object').ok).toBe(false);
  });
});

describe('outbox items queued by the kinds', () => {
  const job = {
    id: 7,
    channelId: 'C0DOCS',
    threadTs: '1700000000.000100',
    cardTs: '1700000000.000100',
    origin: 'command',
    privacy: 'public',
  } as JobRecord;
  const run = (id: number, seq: number, messageTs: string | null) => ({ id, seq, messageTs }) as RunRecord;

  it('pass the check they are read back with', () => {
    const to = { channelId: 'C0DOCS', userId: 'U0ALICE', threadTs: null, responseUrl: null };
    const items: NewOutboxItem[] = [
      threadPost({ job, key: keys.startError({ jobId: 7 }), kind: 'notice', text: md`no` }),
      privateNote(7, keys.refused({ jobId: 7 }), to, md`no`),
      privateNote(7, keys.refused({ jobId: 7 }), { ...to, responseUrl: 'https://hooks.slack.com/x' }, md`no`),
      ...receivedReaction(job, run(41, 2, '1700000000.000200')),
      ...cardUpdate(job),
      outcomeNotification({
        job,
        run: run(41, 2, null),
        outcome: 'completed_pr',
        to: { channel: 'C0NOTIFY' },
        text: md`pr`,
      }),
      outcomeNotification({
        job,
        run: run(41, 2, null),
        outcome: 'failed',
        to: { user: 'U0ALICE' },
        text: md`failed`,
        blocks: [{ type: 'divider' }],
      }),
    ];
    expect(items.map((i) => i.payload.type)).toEqual([
      'post',
      'ephemeral',
      'respond',
      'reaction',
      'update_root',
      'notify',
      'direct',
    ]);
    expect(items.slice(-2).map((i) => i.dedupeKey)).toEqual(['notify:2:7', 'requester-dm:2:7']);
    expect(items.at(-2)?.payload).toEqual({
      type: 'notify',
      channel: 'C0NOTIFY',
      text: 'pr',
      eventType: 'docs_agent_notification',
      fields: { run: 2, outcome: 'completed_pr', thread: '1700000000.000100' },
    });
    for (const item of items) {
      // Through JSON, as the store keeps them.
      expect(parseOutboxPayload(JSON.parse(JSON.stringify(item.payload)))).toEqual({
        ok: true,
        payload: item.payload,
      });
    }
  });
});

describe('sending an outbox item', () => {
  const w = useDeliveryWorld();
  const claimCovers = async () => true;
  const post = () =>
    threadPost({
      job: { id: 7, channelId: 'C0DOCS', threadTs: '1700000000.000100' } as JobRecord,
      key: keys.outcome({ jobId: 7, runSeq: 2 }),
      kind: 'outcome',
      text: md`Done`,
    });

  it('sends nothing once the claim on it was taken over', async () => {
    const item = await w.claimed({ ...post(), jobId: null });
    await expect(createSender(w.sendDeps()).send(item, async () => false)).rejects.toBeInstanceOf(ClaimLost);
    expect(w.slack.calls).toEqual([]);
  });

  it('rescues only the kinds that have a rescue: thread posts', async () => {
    const sender = createSender(w.sendDeps());
    const reaction = await w.claimed({
      jobId: null,
      dedupeKey: 'received:41',
      payload: { type: 'reaction' as const, channel: 'C0DOCS', ts: '1700000000.000100', name: 'eyes' },
    });
    expect(await sender.rescue(reaction, 'not_in_channel', claimCovers)).toBe('not_rescued');
    const posted = await w.claimed({ ...post(), jobId: null });
    expect(await sender.rescue(posted, 'msg_too_long', claimCovers)).toBe('delivered');
    expect(w.slack.messages.map((m) => m.channel)).toEqual(['C0DOCS']);
  });
});

describe('the outbox', () => {
  const w = useDeliveryWorld();
  it('gives up an item whose payload it cannot read, and delivers the others', async () => {
    // A store on the real clock: the running outbox claims and delivers by it.
    const store = openSqliteStore(':memory:');
    const broken = { type: 'post', channel: 'C0DOCS' } as unknown as OutboxPayload;
    const good: OutboxPayload = {
      type: 'ephemeral',
      channel: 'C0DOCS',
      user: 'U0ALICE',
      threadTs: null,
      text: 'hi',
    };
    await store.enqueue(
      [
        { jobId: null, dedupeKey: 'broken', payload: broken },
        { jobId: null, dedupeKey: 'good', payload: good },
      ],
      Date.now(),
    );
    const outbox = w.outboxOn(store);
    outbox.start();
    try {
      await waitFor('both items settled', async () => (await store.nextOutboxAt(Date.now())) === undefined);
    } finally {
      await outbox.stop();
    }
    const rows = store.db
      .prepare('SELECT dedupe_key, delivered_at, dead_at, last_error FROM outbox ORDER BY id')
      .all() as {
      dedupe_key: string;
      delivered_at: number | null;
      dead_at: number | null;
      last_error: string;
    }[];
    expect(
      rows.map((r) => [r.dedupe_key, r.delivered_at !== null, r.dead_at !== null, r.last_error]),
    ).toEqual([
      ['broken', false, true, 'invalid_payload'],
      ['good', true, false, null],
    ]);
    expect(w.slack.callsTo('chat.postMessage')).toHaveLength(0);
    expect(w.slack.callsTo('chat.postEphemeral')).toHaveLength(1);
    expect(w.logged('an outbox item cannot be read')).not.toEqual([]);
    expect(w.logged('delivery crashed')).toEqual([]);
    await store.close();
  });
});
