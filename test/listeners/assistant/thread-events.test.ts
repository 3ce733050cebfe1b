import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  assistantContextStore,
  assistantThreadContextChanged,
  assistantThreadStarted,
} from '../../../src/listeners/assistant/thread-events.js';
import { createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';

type StoreArgs = Parameters<ReturnType<typeof assistantContextStore>['get']>[0];

const DM = 'D0ALICE';
const THREAD = '1729999327.187299';
let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld();
});
afterEach(() => w.stop());

/** An assistant thread event as Slack's documentation shows it. */
function threadEvent(
  type: 'assistant_thread_started' | 'assistant_thread_context_changed',
  thread: Record<string, unknown> = {},
  eventTs: unknown = '1729999327.187299',
) {
  return {
    type,
    assistant_thread: {
      user_id: 'U0ALICE',
      context: { channel_id: 'C0API', team_id: 'T0TEST', enterprise_id: 'E0GRID' },
      channel_id: DM,
      thread_ts: THREAD,
      ...thread,
    },
    event_ts: eventTs,
  };
}

const started = (thread?: Record<string, unknown>, eventTs?: unknown) =>
  assistantThreadStarted(w.deps)({ event: threadEvent('assistant_thread_started', thread, eventTs) });
const paneThread = () => w.store.assistantThread(DM, THREAD);

describe('assistant_thread_started', () => {
  it('records the thread beside its channel before Slack is answered, then suggests the prompts', async () => {
    const record = vi.spyOn(w.store, 'recordAssistantThread');
    await started();
    expect(await paneThread()).toEqual({ contextChannelId: 'C0API' });
    expect(record).toHaveBeenCalledWith(
      { channelId: DM, threadTs: THREAD, contextChannelId: 'C0API' },
      1729999327187,
    );
    await w.idle();
    expect(w.slack.assistantThread).toHaveBeenCalledWith({
      channel: DM,
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
      event: threadEvent('assistant_thread_context_changed', { context: { channel_id: 'C0GUIDES' } }),
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
    expect(await get({ channel: DM, thread_ts: THREAD })).toEqual({ channel_id: 'C0API' });
  });

  it.each([
    ['a thread it never saw', { channel: DM, thread_ts: '1700000000.000009' }],
    ['a message without a thread', { channel: DM }],
    ['a message without a conversation', { thread_ts: THREAD }],
  ])('gives an empty context for %s', async (_what, payload) => {
    await started({ context: { channel_id: 'C0API' } });
    expect(await get(payload)).toEqual({});
  });

  it('saving a context records the thread beside the channel', async () => {
    await assistantContextStore(w.deps).save({
      payload: threadEvent('assistant_thread_context_changed', { context: { channel_id: 'C0SAVED' } }),
    } as unknown as Parameters<ReturnType<typeof assistantContextStore>['save']>[0]);
    expect(await paneThread()).toEqual({ contextChannelId: 'C0SAVED' });
  });
});
