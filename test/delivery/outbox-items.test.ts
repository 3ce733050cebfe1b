import { describe, expect, it } from 'vitest';
import {
  cardUpdate,
  outcomeNotification,
  privateNote,
  RECEIVED_REACTION,
  receivedReaction,
  threadPost,
} from '../../src/delivery/outbox-items.js';
import { keys, parseOutboxPayload } from '../../src/delivery/outbox-registry.js';
import { md } from '../../src/slack/mrkdwn.js';
import type { JobRecord, NewOutboxItem, RunRecord } from '../../src/store/types.js';
import { jobRecord } from '../helpers/job-record.js';

const job = {
  id: 7,
  channelId: 'C0DOCS',
  threadTs: '1700000000.000100',
  cardTs: '1700000000.000100',
  origin: 'command',
  privacy: 'public',
} as JobRecord;
const run = (id: number, seq: number, messageTs: string | null) => ({ id, seq, messageTs }) as RunRecord;

describe('outbox items', () => {
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

  it('update the status card where it is: its own message, or the root a command posted', () => {
    expect(cardUpdate(jobRecord({ id: 7, cardTs: '1.1', threadTs: '1.0' }))).toEqual([
      { jobId: 7, dedupeKey: null, payload: { type: 'update_root', channel: 'C0DOCS', ts: '1.1' } },
    ]);
    expect(
      cardUpdate(jobRecord({ cardTs: null, threadTs: '1.0', origin: 'command' }))[0]?.payload,
    ).toMatchObject({
      ts: '1.0',
    });
    // A mention's thread root is someone else's message: no card until the bot posted one.
    expect(cardUpdate(jobRecord({ cardTs: null, threadTs: '1.0', origin: 'mention' }))).toEqual([]);
    expect(cardUpdate(jobRecord({ cardTs: null, threadTs: null }))).toEqual([]);
  });

  it('mark a follow-up the agent accepted, once per run, and never an instruction without a message', () => {
    expect(receivedReaction(job, run(41, 2, '1700000000.000200'))).toEqual([
      {
        jobId: 7,
        dedupeKey: 'received:41',
        payload: { type: 'reaction', channel: 'C0DOCS', ts: '1700000000.000200', name: RECEIVED_REACTION },
      },
    ]);
    expect(RECEIVED_REACTION).toBe('eyes');
    expect(receivedReaction(job, run(40, 1, null))).toEqual([]);
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

  it('tell a person privately through a response_url while there is one, else by an ephemeral note', () => {
    const to = { channelId: 'C0DOCS', userId: 'U0ALICE', threadTs: '1.0', responseUrl: null };
    expect(privateNote(null, 'refused:7', to, md`no`)).toEqual({
      jobId: null,
      dedupeKey: 'refused:7',
      payload: { type: 'ephemeral', channel: 'C0DOCS', user: 'U0ALICE', threadTs: '1.0', text: 'no' },
    });
    const url = 'https://hooks.slack.com/commands/T0TEST/1/not-a-real-secret';
    expect(privateNote(7, 'refused:7', { ...to, responseUrl: url }, md`no`).payload).toEqual({
      type: 'respond',
      responseUrl: url,
      text: 'no',
      fallback: { channel: 'C0DOCS', user: 'U0ALICE' },
    });
  });
});
