import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  assistantContextStore,
  assistantPane,
  assistantThreadContextChanged,
  assistantThreadStarted,
  screenAssistantEvents,
} from '../../../src/features/agent-messaging/assistant-pane.js';
import { type ListenerApp, startListenerApp } from '../../helpers/listener-app.js';
import { createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';
import { PANE_DM, paneEvent, paneMessage } from '../../helpers/payloads.js';

type StoreArgs = Parameters<ReturnType<typeof assistantContextStore>['get']>[0];
type ScreenArgs = Parameters<ReturnType<typeof screenAssistantEvents>>[0];

const THREAD = '1729999327.187299';
/** The channel the pane is beside, as Slack's documentation shows it (an Enterprise Grid workspace). */
const CONTEXT = { channel_id: 'C0API', team_id: 'T0TEST', enterprise_id: 'E0GRID' };
let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld();
});
afterEach(() => w.stop());

const started = (thread?: Record<string, unknown>, eventTs: unknown = THREAD) =>
  assistantThreadStarted(w.deps)({ event: paneEvent('started', THREAD, CONTEXT, { thread, eventTs }) });
const paneThread = () => w.store.assistantThread(PANE_DM, THREAD);

describe('assistant_thread_started', () => {
  it('records the thread beside its channel before Slack is answered, then suggests the prompts', async () => {
    const record = vi.spyOn(w.store, 'recordAssistantThread');
    await started();
    expect(await paneThread()).toEqual({ contextChannelId: 'C0API' });
    expect(record).toHaveBeenCalledWith(
      { channelId: PANE_DM, threadTs: THREAD, contextChannelId: 'C0API' },
      1729999327187,
    );
    await w.idle();
    expect(w.slack.assistantThread).toHaveBeenCalledWith({
      channel: PANE_DM,
      threadTs: THREAD,
      prompts: w.config.suggestedPrompts,
    });
    expect(w.config.suggestedPrompts.length).toBeGreaterThan(0);
  });

  it('with no suggested prompts configured: records the thread and suggests nothing', async () => {
    await w.stop();
    w = createListenerWorld({ SUGGESTED_PROMPTS: '' });
    await started();
    expect(await paneThread()).toEqual({ contextChannelId: 'C0API' });
    expect(w.deps.tasks.run).not.toHaveBeenCalled();
  });

  it.each([
    ['an empty context (the pane opened beside no channel)', { context: {} }],
    ['no context', { context: undefined }],
    ['a channel id that is not a string', { context: { channel_id: 42 } }],
    ['a context that is not an object', { context: 'C0API' }],
  ])('with %s: the thread is still recorded, beside no channel', async (_what, thread) => {
    await started(thread);
    expect(await paneThread()).toEqual({ contextChannelId: null });
  });

  it('an event_ts it cannot read is recorded as now', async () => {
    const record = vi.spyOn(w.store, 'recordAssistantThread');
    const before = Date.now();
    await started({}, 'soon');
    expect(record.mock.calls[0]?.[1]).toBeGreaterThanOrEqual(before);
    expect(record.mock.calls[0]?.[1]).toBeLessThanOrEqual(Date.now());
  });

  it.each([
    ['without its thread_ts', { thread_ts: undefined }],
    ['whose channel is empty', { channel_id: '' }],
  ])('a thread %s is not recorded, and nothing is suggested', async (_what, thread) => {
    await expect(started(thread)).resolves.toBeUndefined();
    expect(w.store.db.prepare('SELECT count(*) AS n FROM assistant_threads').get()).toEqual({ n: 0 });
    expect(w.deps.tasks.run).not.toHaveBeenCalled();
  });

  it('a store failure is passed on (Slack delivers the event again), and nothing is suggested', async () => {
    vi.spyOn(w.store, 'recordAssistantThread').mockRejectedValueOnce(new Error('disk I/O error'));
    await expect(started()).rejects.toThrow('disk I/O error');
    expect(w.deps.tasks.run).not.toHaveBeenCalled();
  });
});

describe('assistant_thread_context_changed', () => {
  it('records the channel the pane is now beside, and suggests nothing', async () => {
    await started();
    await assistantThreadContextChanged(w.deps)({
      event: paneEvent('context_changed', THREAD, { channel_id: 'C0GUIDES' }),
    });
    expect(await paneThread()).toEqual({ contextChannelId: 'C0GUIDES' });
    expect(w.deps.tasks.run).toHaveBeenCalledOnce();
  });
});

describe('the assistant’s thread context store', () => {
  const get = (payload: Record<string, unknown>) =>
    assistantContextStore(w.deps).get({ payload } as unknown as StoreArgs);

  it('gives the channel a thread’s pane is beside, read from the bot’s own store', async () => {
    await started();
    expect(await get({ channel: PANE_DM, thread_ts: THREAD })).toEqual({ channel_id: 'C0API' });
  });

  it.each([
    ['a thread it never saw', { channel: PANE_DM, thread_ts: '1700000000.000009' }],
    ['a message without a thread', { channel: PANE_DM }],
    ['a message without a conversation', { thread_ts: THREAD }],
  ])('gives an empty context for %s', async (_what, payload) => {
    await started({ context: { channel_id: 'C0API' } });
    expect(await get(payload)).toEqual({});
  });

  it('saving a context records the thread beside the channel', async () => {
    await assistantContextStore(w.deps).save({
      payload: paneEvent('context_changed', THREAD, { channel_id: 'C0SAVED' }),
    } as unknown as Parameters<ReturnType<typeof assistantContextStore>['save']>[0]);
    expect(await paneThread()).toEqual({ contextChannelId: 'C0SAVED' });
  });
});

const WORDS = 'the launch date is 12 March';

/** Runs the middleware on an Events API delivery of `event`; whether it let the event through. */
async function screen(
  screenWith: ReturnType<typeof screenAssistantEvents>,
  event: Record<string, unknown>,
  envelope: Record<string, unknown> = { type: 'event_callback', event_id: 'Ev0MALFORMED1' },
) {
  const next = vi.fn(async () => {});
  await screenWith({ payload: event, body: { ...envelope, event }, next } as unknown as ScreenArgs);
  return next.mock.calls.length === 1;
}

const startedEvent = (thread: Record<string, unknown>) =>
  paneEvent('started', '1700000700.000100', {}, { thread });

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
    ['a thread started as Slack documents it', startedEvent({ context: { channel_id: 'C0API' } })],
    ['a context change', { ...startedEvent({}), type: 'assistant_thread_context_changed' }],
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
    expect(await screen(screenWith, startedEvent({ thread_ts: undefined }), { type: 'block_actions' })).toBe(
      true,
    );
  });

  it.each([
    [
      'a thread started without its thread_ts',
      startedEvent({ thread_ts: undefined }),
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
    const bad = startedEvent({ thread_ts: '' });
    for (let i = 0; i < 4; i++) expect(await screen(screenWith, bad)).toBe(false);
    expect(warnings()).toHaveLength(1);
    await screen(screenWith, bad, { type: 'event_callback', event_id: 'Ev0MALFORMED2' });
    expect(warnings()).toHaveLength(2);
  });

  it('logs each delivery without an event id, and cuts an overlong id', async () => {
    const screenWith = screenAssistantEvents(w.deps);
    const bad = startedEvent({ thread_ts: 7 });
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

describe('assistantPane, registered as Bolt’s Assistant', () => {
  // One app for the block: each test works in an assistant thread of its own.
  let pane: ListenerWorld;
  let app: ListenerApp;
  /** The pane's messages listener: the table of listeners hands it the direct-message one. */
  const userMessage = vi.fn(async () => {});
  beforeAll(async () => {
    pane = createListenerWorld();
    app = await startListenerApp(pane, (bolt, deps) => bolt.assistant(assistantPane(deps, userMessage)));
  });
  afterAll(async () => {
    await app.stop();
    await pane.stop();
  });

  it('a thread started in the pane is recorded beside its channel, and the prompts suggested', async () => {
    const thread = '1729999327.100001';
    const res = await app.event(paneEvent('started', thread, 'C0API'));
    expect(res.status).toBe(200);
    expect(await pane.store.assistantThread(PANE_DM, thread)).toEqual({ contextChannelId: 'C0API' });
    await pane.idle();
    expect(pane.slack.assistantThread).toHaveBeenCalledWith(
      expect.objectContaining({ channel: PANE_DM, threadTs: thread }),
    );
  });

  it('the pane moving beside another channel is recorded', async () => {
    const thread = '1729999327.200001';
    await app.event(paneEvent('started', thread, 'C0API'));
    const res = await app.event(paneEvent('context_changed', thread, 'C0GUIDES'));
    expect(res.status).toBe(200);
    expect(await pane.store.assistantThread(PANE_DM, thread)).toEqual({ contextChannelId: 'C0GUIDES' });
  });

  it('a message in the pane’s thread is handed to its messages listener; one at the top of the conversation is not (the table of listeners hands it to the direct-message listener)', async () => {
    userMessage.mockClear();
    const top = await app.event(paneMessage('1729999327.400001', 'Document the CLI'));
    expect(top.status).toBe(200);
    expect(userMessage).not.toHaveBeenCalled();
    const thread = '1729999327.400002';
    await app.event(paneEvent('started', thread, 'C0API'));
    const threaded = await app.event(paneMessage('1729999327.400003', 'Document the rate limits', thread));
    expect(threaded.status).toBe(200);
    expect(userMessage).toHaveBeenCalledOnce();
  });
});
