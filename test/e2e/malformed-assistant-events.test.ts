import { describe, expect, it } from 'vitest';
import { API_KEY } from '../helpers/agent-stand-in.js';
import { useHarness } from '../helpers/harness.js';
import { eventEnvelope } from '../helpers/payloads.js';
import { leaks } from '../helpers/secrets.js';
import { postSigned, SIGNING_SECRET } from '../helpers/signing.js';
import { BOT_TOKEN } from '../helpers/slack-stand-in.js';

const h = useHarness();

/** Sends an Events API event, signed, as Slack first delivers it or as its `retry`-th re-delivery. */
function deliver(event: Record<string, unknown>, eventId: string, retry?: number) {
  return postSigned(h.base(), eventEnvelope(event, { event_id: eventId }), {
    contentType: 'application/json',
    ...(retry
      ? { headers: { 'x-slack-retry-num': String(retry), 'x-slack-retry-reason': 'http_error' } }
      : {}),
  });
}

/** Log lines at warn or error written since `from`, parsed. */
const problemsSince = (from: number) =>
  h.logs
    .slice(from)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.level === 'warn' || line.level === 'error');

// Each is an event Bolt's assistant middleware takes as its own, without a thread it can read.
const MALFORMED: { name: string; event: Record<string, unknown>; names: string }[] = [
  {
    name: 'an assistant thread started without its thread_ts',
    event: {
      type: 'assistant_thread_started',
      assistant_thread: { user_id: 'U0ALICE', channel_id: 'D0ALICE', context: {} },
      event_ts: '1700000700.000100',
    },
    names: 'thread_ts',
  },
  {
    name: 'a context change whose assistant_thread is null',
    event: {
      type: 'assistant_thread_context_changed',
      assistant_thread: null,
      event_ts: '1700000700.000200',
    },
    names: 'assistant_thread',
  },
  {
    name: 'a direct message in a thread whose thread_ts is not a string',
    event: {
      type: 'message',
      channel: 'D0ALICE',
      channel_type: 'im',
      user: 'U0ALICE',
      text: 'Document the CLI',
      ts: '1700000700.000300',
      thread_ts: 1700000700,
      event_ts: '1700000700.000300',
    },
    names: 'thread_ts',
  },
];

describe('malformed assistant events', () => {
  for (const { name, event, names } of MALFORMED) {
    it(`${name}: answered 200, logged once naming what failed, and not again when re-delivered`, async () => {
      const from = h.logs.length;
      const eventId = `EvMALFORMED${String(event.event_ts).replace('.', '')}`;
      const first = await deliver(event, eventId);
      expect(first.status).toBe(200);

      const problems = problemsSince(from);
      expect(problems, JSON.stringify(problems)).toHaveLength(1);
      const line = JSON.stringify(problems[0]);
      expect(line).toContain(String(event.type));
      expect(line).toContain(names);
      expect(line).toContain(eventId);
      expect(leaks(h.logs.slice(from), { BOT_TOKEN, SIGNING_SECRET, API_KEY })).toEqual([]);

      // Slack's re-delivery of the same event: still 200, and not logged a second time.
      const again = await deliver(event, eventId, 1);
      expect(again.status).toBe(200);
      expect(problemsSince(from)).toHaveLength(1);
      await h.settled();
      expect(h.agent.requests).toEqual([]);
    });
  }
});

describe('an assistant thread event whose only fault is its context', () => {
  const CONTEXTS: { name: string; context: unknown }[] = [
    { name: 'an empty channel id', context: { channel_id: '', team_id: 'T0TEST' } },
    { name: 'a channel id that is not a string', context: { channel_id: 42 } },
    { name: 'a context that is not an object', context: 'C0GENERAL' },
  ];
  for (const { name, context } of CONTEXTS) {
    it(`${name}: the thread is still recorded, beside no channel`, async () => {
      const threadTs = `1700000800.00${String(CONTEXTS.findIndex((c) => c.name === name)).padStart(4, '0')}`;
      const res = await deliver(
        {
          type: 'assistant_thread_started',
          assistant_thread: { user_id: 'U0ALICE', channel_id: 'D0ALICE', thread_ts: threadTs, context },
          event_ts: threadTs,
        },
        `EvCONTEXT${threadTs.replace('.', '')}`,
      );
      expect(res.status).toBe(200);
      await h.settled();
      expect(await h.app.store.assistantThread('D0ALICE', threadTs)).toEqual({ contextChannelId: null });
    });
  }
});
