import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { appContextChanged } from '../../../src/features/agent-messaging/app-context-changed.js';
import { WHOLE_CONVERSATION } from '../../../src/store/areas.js';
import { boltEventArgs, createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';

type Args = Parameters<ReturnType<typeof appContextChanged>>[0];

const DM = 'D0ALICE';
let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld();
});
afterEach(() => w.stop());

/** Calls the listener with `app_context_changed` as Slack documents it (agent messaging). */
function contextChanged(fields: Record<string, unknown> = {}) {
  const event = {
    type: 'app_context_changed',
    channel: DM,
    user: 'U0ALICE',
    context: { entities: [{ type: 'slack#/types/channel_id', value: 'C0API', team_id: 'T0TEST' }] },
    event_ts: '1783536983.123456',
    ...fields,
  };
  return appContextChanged(w.deps)(boltEventArgs<Args>(event));
}

const paneOf = () => w.store.assistantThread(DM, WHOLE_CONVERSATION);

describe('app_context_changed', () => {
  it('records the channel beside the whole conversation, before Slack is answered', async () => {
    await contextChanged();
    expect(await paneOf()).toEqual({ contextChannelId: 'C0API' });
  });

  it('a later change replaces the channel', async () => {
    await contextChanged();
    await contextChanged({
      context: { entities: [{ type: 'slack#/types/channel_id', value: 'C0GUIDES' }] },
      event_ts: '1783536999.000001',
    });
    expect(await paneOf()).toEqual({ contextChannelId: 'C0GUIDES' });
  });

  it('picks the channel among entities it does not use', async () => {
    await contextChanged({
      context: {
        entities: [
          { type: 'slack#/types/user_id', value: 'U0BOB' },
          { type: 'slack#/types/channel_id', value: 42 },
          { type: 'slack#/types/channel_id', value: 'C0API' },
        ],
      },
    });
    expect(await paneOf()).toEqual({ contextChannelId: 'C0API' });
  });

  it.each([
    ['no context', { context: undefined }],
    ['a context that is not an object', { context: 'C0API' }],
    ['entities that are not a list', { context: { entities: { type: 'slack#/types/channel_id' } } }],
    [
      'only entities it does not use',
      { context: { entities: [{ type: 'slack#/types/user_id', value: 'U0B' }] } },
    ],
  ])('with %s: the conversation is still recorded, beside no channel', async (_what, fields) => {
    await contextChanged(fields);
    expect(await paneOf()).toEqual({ contextChannelId: null });
  });

  it('records when Slack says it happened, or now when the event_ts cannot be read', async () => {
    const record = vi.spyOn(w.store, 'recordAssistantThread');
    await contextChanged();
    const before = Date.now();
    await contextChanged({ event_ts: 'not-a-time' });
    const [first, second] = record.mock.calls.map((c) => c[1]);
    expect(first).toBe(1783536983123);
    expect(second).toBeGreaterThanOrEqual(before);
    expect(second).toBeLessThanOrEqual(Date.now());
  });

  it('takes the channel of a message in view (a thread) as the channel beside', async () => {
    await contextChanged({
      context: {
        entities: [
          { type: 'slack#/types/message_context', value: { channel_id: 'C0GUIDES', message_ts: '1.2' } },
          { type: 'slack#/types/channel_id', value: 'C0API' },
        ],
      },
    });
    expect(await paneOf()).toEqual({ contextChannelId: 'C0GUIDES' });
  });

  it('passes over a value that is not a channel id', async () => {
    await contextChanged({
      context: { entities: [{ type: 'slack#/types/channel_id', value: '<!channel>' }] },
    });
    expect(await paneOf()).toEqual({ contextChannelId: null });
  });

  it('Slack’s documented example (no conversation, user or event_ts): said once, neither dropped unseen nor failed', async () => {
    // As on docs.slack.dev, "app_context_changed event": only `type` and `context`.
    const documented = {
      type: 'app_context_changed',
      context: {
        entities: [{ type: 'slack#/types/channel_id', value: 'C01234ABDCE', team_id: 'T0ABCDE6543' }],
      },
    };
    const handle = appContextChanged(w.deps);
    await expect(handle(boltEventArgs<Args>(documented))).resolves.toBeUndefined();
    await handle(boltEventArgs<Args>(documented));
    const said = w.logs.filter((l) => l.includes('app_context_changed names no conversation'));
    expect(said.map((l) => JSON.parse(l).level)).toEqual(['info', 'debug']);
    expect(JSON.parse(said[0] as string).fields).toEqual(['channel']);
    expect(w.logged('warn', 'app_context_changed')).toEqual([]);
    expect(w.store.db.prepare('SELECT count(*) AS n FROM assistant_threads').get()).toEqual({ n: 0 });
  });

  it('an event whose conversation is not a string is logged and records nothing', async () => {
    await expect(contextChanged({ channel: { id: DM } })).resolves.toBeUndefined();
    expect(await paneOf()).toBeUndefined();
    expect(
      JSON.parse(w.logged('warn', 'app_context_changed event not understood')[0] as string).fields,
    ).toEqual(['channel']);
  });

  it('a store failure is passed on, so Slack delivers the event again', async () => {
    vi.spyOn(w.store, 'recordAssistantThread').mockRejectedValueOnce(new Error('disk I/O error'));
    await expect(contextChanged()).rejects.toThrow('disk I/O error');
  });
});
