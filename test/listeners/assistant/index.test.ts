import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAssistant } from '../../../src/listeners/assistant/index.js';
import { type ListenerApp, startListenerApp } from '../../helpers/listener-app.js';
import { createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';

// One app for the file: each test works in an assistant thread of its own.
let w: ListenerWorld;
let app: ListenerApp;
beforeAll(async () => {
  w = createListenerWorld();
  app = await startListenerApp(w, registerAssistant);
});
afterAll(async () => {
  await app.stop();
  await w.stop();
});

const DM = 'D0ALICE';

/** An assistant thread event as Slack's documentation shows it. */
const threadEvent = (type: string, threadTs: string, context: Record<string, unknown> = {}) => ({
  type,
  assistant_thread: { user_id: 'U0ALICE', context, channel_id: DM, thread_ts: threadTs },
  event_ts: threadTs,
});

/** A person's message in Alice's direct message with the bot. */
const dm = (ts: string, text: string, threadTs?: string) => ({
  type: 'message',
  channel: DM,
  channel_type: 'im',
  user: 'U0ALICE',
  text,
  ts,
  event_ts: ts,
  ...(threadTs ? { thread_ts: threadTs } : {}),
});

describe('registerAssistant', () => {
  it('a thread started in the pane is recorded beside its channel, and the prompts suggested', async () => {
    const thread = '1729999327.100001';
    const res = await app.event(threadEvent('assistant_thread_started', thread, { channel_id: 'C0API' }));
    expect(res.status).toBe(200);
    expect(await w.store.assistantThread(DM, thread)).toEqual({ contextChannelId: 'C0API' });
    await w.idle();
    expect(w.slack.assistantThread).toHaveBeenCalledWith(
      expect.objectContaining({ channel: DM, threadTs: thread }),
    );
  });

  it('the pane moving beside another channel is recorded', async () => {
    const thread = '1729999327.200001';
    await app.event(threadEvent('assistant_thread_started', thread, { channel_id: 'C0API' }));
    const res = await app.event(
      threadEvent('assistant_thread_context_changed', thread, { channel_id: 'C0GUIDES', team_id: 'T0TEST' }),
    );
    expect(res.status).toBe(200);
    expect(await w.store.assistantThread(DM, thread)).toEqual({ contextChannelId: 'C0GUIDES' });
  });

  it('a message in the pane’s thread reaches the direct-message listener: a job beside the pane’s channel', async () => {
    const thread = '1729999327.300001';
    await app.event(threadEvent('assistant_thread_started', thread, { channel_id: 'C0API' }));
    const res = await app.event(dm('1729999327.300002', 'Document the rate limits', thread));
    expect(res.status).toBe(200);
    const [job] = await w.store.recentJobs({ requesterId: 'U0ALICE' }, 5);
    expect(job).toMatchObject({
      origin: 'direct',
      threadTs: thread,
      privacy: 'pane',
      contextChannelId: 'C0API',
    });
    await w.idle();
  });

  it('a message at the top of the conversation is not the assistant’s (the events listener takes it)', async () => {
    const res = await app.event(dm('1729999327.400001', 'Document the CLI'));
    expect(res.status).toBe(200);
    const jobs = await w.store.recentJobs({ requesterId: 'U0ALICE' }, 5);
    expect(jobs.map((j) => j.threadTs)).not.toContain('1729999327.400001');
  });

  it('an assistant event whose thread cannot be read is answered 200 and logged, never a server error', async () => {
    const res = await app.event(
      {
        type: 'assistant_thread_started',
        assistant_thread: { user_id: 'U0ALICE', channel_id: DM },
        event_ts: '1.2',
      },
      { event_id: 'Ev0NOTHREAD' },
    );
    expect(res.status).toBe(200);
    expect(w.logged('warn', 'assistant event not understood')).toHaveLength(1);
    expect(w.logged('error', 'unhandled error in a listener')).toEqual([]);
  });
});
