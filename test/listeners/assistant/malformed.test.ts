import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { screenAssistantEvents } from '../../../src/listeners/assistant/malformed.js';
import { createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';

type Args = Parameters<ReturnType<typeof screenAssistantEvents>>[0];

let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld();
});
afterEach(() => w.stop());

const WORDS = 'the launch date is 12 March';

/** Runs the middleware on an Events API delivery of `event`; whether it let the event through. */
async function screen(
  screenWith: ReturnType<typeof screenAssistantEvents>,
  event: Record<string, unknown>,
  envelope: Record<string, unknown> = { type: 'event_callback', event_id: 'Ev0MALFORMED1' },
) {
  const next = vi.fn(async () => {});
  await screenWith({ payload: event, body: { ...envelope, event }, next } as unknown as Args);
  return next.mock.calls.length === 1;
}

const started = (thread: Record<string, unknown>) => ({
  type: 'assistant_thread_started',
  assistant_thread: { user_id: 'U0ALICE', channel_id: 'D0ALICE', thread_ts: '1700000700.000100', ...thread },
  event_ts: '1700000700.000100',
});

const threadedDm = (fields: Record<string, unknown>) => ({
  type: 'message',
  channel: 'D0ALICE',
  channel_type: 'im',
  user: 'U0ALICE',
  text: WORDS,
  ts: '1700000700.000300',
  thread_ts: '1700000700.000100',
  ...fields,
});

const warnings = () => w.logged('warn', 'assistant event not understood');

describe('screenAssistantEvents', () => {
  it.each([
    ['a thread started as Slack documents it', started({ context: { channel_id: 'C0API' } })],
    ['a context change', { ...started({}), type: 'assistant_thread_context_changed' }],
    ['a threaded direct message', threadedDm({})],
    ['a file shared in an assistant thread', threadedDm({ subtype: 'file_share' })],
    [
      'a message in a channel’s thread, whatever its thread_ts',
      threadedDm({ channel_type: 'channel', thread_ts: 1 }),
    ],
    [
      'an edit in a direct message (not the assistant’s)',
      threadedDm({ subtype: 'message_changed', thread_ts: 1 }),
    ],
    ['an event the assistant does not take, malformed or not', { type: 'app_mention', user: 42 }],
  ])('lets %s through', async (_what, event) => {
    expect(await screen(screenAssistantEvents(w.deps), event)).toBe(true);
    expect(warnings()).toEqual([]);
  });

  it('lets through what is not an Events API delivery (an action, a command)', async () => {
    const screenWith = screenAssistantEvents(w.deps);
    expect(await screen(screenWith, started({ thread_ts: undefined }), { type: 'block_actions' })).toBe(true);
  });

  it.each([
    [
      'a thread started without its thread_ts',
      started({ thread_ts: undefined }),
      'assistant_thread.thread_ts',
    ],
    [
      'a context change whose assistant_thread is null',
      { type: 'assistant_thread_context_changed', assistant_thread: null },
      'assistant_thread',
    ],
    [
      'a threaded direct message whose thread_ts is a number',
      threadedDm({ thread_ts: 1700000700 }),
      'thread_ts',
    ],
    [
      'a file shared in a thread whose channel is empty',
      threadedDm({ subtype: 'file_share', channel: '' }),
      'channel',
    ],
  ])(
    'stops %s, logging the event’s id and what failed, never what was written',
    async (_what, event, path) => {
      expect(await screen(screenAssistantEvents(w.deps), event)).toBe(false);
      const lines = warnings();
      expect(lines).toHaveLength(1);
      const line = JSON.parse(lines[0] as string) as { type: string; eventId: string; issues: string[] };
      expect(line.type).toBe(event.type);
      expect(line.eventId).toBe('Ev0MALFORMED1');
      expect(line.issues.map((i) => i.split(':')[0])).toEqual([path]);
      expect(lines[0]).not.toContain('launch date');
    },
  );

  it('logs one event once, however often Slack delivers it again, and the next event anew', async () => {
    const screenWith = screenAssistantEvents(w.deps);
    const bad = started({ thread_ts: '' });
    for (let i = 0; i < 4; i++) expect(await screen(screenWith, bad)).toBe(false);
    expect(warnings()).toHaveLength(1);
    await screen(screenWith, bad, { type: 'event_callback', event_id: 'Ev0MALFORMED2' });
    expect(warnings()).toHaveLength(2);
  });

  it('logs each delivery without an event id, and cuts an overlong id', async () => {
    const screenWith = screenAssistantEvents(w.deps);
    const bad = started({ thread_ts: 7 });
    await screen(screenWith, bad, { type: 'event_callback' });
    await screen(screenWith, bad, { type: 'event_callback', event_id: 42 });
    await screen(screenWith, bad, { type: 'event_callback', event_id: `Ev${'X'.repeat(500)}` });
    const lines = warnings().map((l) => JSON.parse(l) as { eventId?: string });
    expect(lines.map((l) => l.eventId?.length)).toEqual([undefined, undefined, 64]);
  });

  it('names a thread that is not an object', async () => {
    expect(
      await screen(screenAssistantEvents(w.deps), {
        type: 'assistant_thread_started',
        assistant_thread: 'D0ALICE',
      }),
    ).toBe(false);
    expect(JSON.parse(warnings()[0] as string).issues[0]).toMatch(/^assistant_thread: /);
  });
});
