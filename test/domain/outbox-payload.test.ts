import { afterEach, describe, expect, it } from 'vitest';
import { parseOutboxPayload } from '../../src/delivery/outbox-registry.js';
import type { OutboxPayload } from '../../src/domain/outbox-payload.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';

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
});
