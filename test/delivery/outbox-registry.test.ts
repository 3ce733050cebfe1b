import { afterEach, describe, expect, it } from 'vitest';
import {
  BOT_EVENT_TYPES,
  CARD_EVENT_TYPE,
  cardMetadata,
  keys,
  NOTIFICATION_EVENT_TYPE,
  OUTBOX_ITEMS,
  POST_EVENT_TYPE,
  parseOutboxPayload,
  unkeyedPostKey,
} from '../../src/delivery/outbox-registry.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { OutboxPayload } from '../../src/store/types.js';
import { gatewayOnStandIn, outboxOnStandIn } from '../helpers/gateway-on-stand-in.js';
import { waitFor } from '../helpers/http.js';
import type { SlackStandIn } from '../helpers/slack-stand-in.js';

describe('outbox item keys', () => {
  // Keys written by one release are read back by the next (unique index, Slack metadata):
  // these texts never change.
  it('are the keys earlier releases wrote', () => {
    expect(keys.outcome({ jobId: 7, runSeq: 2 })).toBe('outcome:2:7');
    expect(keys.startError({ jobId: 7 })).toBe('start-error:7');
    expect(keys.startUnknown({ jobId: 7 })).toBe('start-unknown:7');
    expect(keys.pollRefused({ jobId: 7, runCount: 3 })).toBe('poll-refused:3:7');
    expect(keys.followUpError({ jobId: 7, runId: 41 })).toBe('followup-error:41:7');
    expect(keys.followUpUnknown({ jobId: 7, runId: 41 })).toBe('followup-unknown:41:7');
    expect(keys.startRefused({ jobId: 7 })).toBe('start-refused:7');
    expect(keys.refused({ jobId: 7 })).toBe('refused:7');
    expect(keys.restartRefused({ jobId: 7 })).toBe('restart-refused:7');
    expect(keys.dropped({ runId: 41 })).toBe('dropped:41');
    expect(keys.held({ kind: 'job', id: 7 })).toBe('held:job:7');
    expect(keys.held({ kind: 'reply', id: 41 })).toBe('held:reply:41');
    expect(keys.received({ runId: 41 })).toBe('received:41');
    expect(keys.notification({ jobId: 7, runSeq: 2 })).toBe('notify:2:7');
    expect(keys.requesterDm({ jobId: 7, runSeq: 2 })).toBe('requester-dm:2:7');
    expect(OUTBOX_ITEMS.cardUpdate.key).toBeNull();
    expect(unkeyedPostKey(12)).toBe('outbox-12');
  });

  it('are the keys of Workflow Builder steps: one answer per step execution', () => {
    expect(keys.stepCompleted({ executionId: 'Fx0123ABC' })).toBe('step:Fx0123ABC');
    expect(keys.stepWait({ executionId: 'Fx0123ABC' })).toBe('step-wait:Fx0123ABC');
  });

  it('are the keys of edits, deletions and shared files', () => {
    expect(keys.editedLate({ runId: 41, version: '1700000300.000200' })).toBe(
      'edited-late:41:1700000300.000200',
    );
    expect(keys.deletedLate({ runId: 41 })).toBe('deleted-late:41');
    expect(keys.editRefused({ runId: 41, version: '1700000300.000200' })).toBe(
      'edit-refused:41:1700000300.000200',
    );
    expect(keys.withdrawn({ runId: 41 })).toBe('withdrawn:41');
    expect(keys.stopped({ jobId: 7, run: 2, first: 41 })).toBe('stopped:2:41:7');
    expect(keys.stopRefused({ jobId: 7, eventTs: '1783536983.783769' })).toBe(
      'stop-refused:1783536983.783769:7',
    );
    expect(keys.filesUnseen({ channelId: 'C0DOCS', messageTs: '1700000300.000100' })).toBe(
      'files:C0DOCS:1700000300.000100',
    );
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
    const posts = Object.entries(OUTBOX_ITEMS).filter(([, item]) => item.payload === 'post');
    expect(posts.map(([name]) => name).sort()).toEqual(
      [
        'followUpError',
        'followUpUnknown',
        'outcome',
        'pollRefused',
        'startError',
        'startUnknown',
        'stopped',
      ].sort(),
    );
    for (const [, item] of posts) expect('eventType' in item && item.eventType).toBe('docs_agent_post');
  });

  it('name each kind once: no two kinds can make the same key', () => {
    const prefixes = Object.values(OUTBOX_ITEMS).flatMap((item) =>
      item.key
        ? [
            (item.key as (a: object) => string)({
              jobId: 1,
              runId: 1,
              runSeq: 1,
              runCount: 1,
              kind: 'job',
              id: 1,
              version: '1',
              channelId: 'C1',
              messageTs: '1',
            }).split(':')[0],
          ]
        : [],
    );
    expect(new Set(prefixes).size).toBe(prefixes.length);
  });
});

describe('payloads read back from the store', () => {
  it('keep fields a later release added, and refuse what they cannot deliver', () => {
    const later = { type: 'reaction', channel: 'C0DOCS', ts: '1.2', name: 'eyes', extra: 1 };
    expect(parseOutboxPayload(later)).toEqual({ ok: true, payload: later });
    expect(parseOutboxPayload({ type: 'post', channel: 'C0DOCS' }).ok).toBe(false);
    expect(parseOutboxPayload({ type: 'teleport' }).ok).toBe(false);
    expect(parseOutboxPayload('not an object').ok).toBe(false);
  });
});

let slack: SlackStandIn | undefined;
afterEach(async () => {
  await slack?.close();
});

describe('the outbox', () => {
  it('gives up an item whose payload it cannot read, and delivers the others', async () => {
    const world = await gatewayOnStandIn();
    slack = world.slack;
    const { gateway, logger, lines } = world;
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
    const outbox = outboxOnStandIn(store, { gateway, logger });
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
    expect(slack.callsTo('chat.postMessage')).toHaveLength(0);
    expect(slack.callsTo('chat.postEphemeral')).toHaveLength(1);
    expect(lines.join('\n')).toContain('an outbox item cannot be read');
    expect(lines.join('\n')).not.toContain('delivery crashed');
    await store.close();
  });
});
