import type { AssistantConfig } from '@slack/bolt';
import { z } from 'zod';
import type { ListenerDeps } from '../types.js';

/** An assistant thread event as it is read: its thread, and the channel the pane is beside. */
export const threadSchema = z.object({
  assistant_thread: z.object({
    channel_id: z.string().min(1),
    thread_ts: z.string().min(1),
    // Only the pane's channel is lost when the context is malformed: the thread is still
    // recorded (beside no channel), so its messages are still the pane's, checked as direct ones.
    context: z
      .object({ channel_id: z.string().min(1).optional() })
      .optional()
      .catch(undefined),
  }),
  event_ts: z.string().optional(),
});

/** What an assistant event tells: its thread, the channel the pane is beside, and when. */
function threadOf(event: unknown) {
  const parsed = threadSchema.safeParse(event);
  if (!parsed.success) return undefined;
  const { assistant_thread: t, event_ts } = parsed.data;
  const at = event_ts ? Math.round(Number(event_ts) * 1000) : Number.NaN;
  return {
    channelId: t.channel_id,
    threadTs: t.thread_ts,
    contextChannelId: t.context?.channel_id ?? null,
    at: Number.isFinite(at) ? at : Date.now(),
  };
}

/**
 * Records an assistant thread and the channel its pane is beside, before Slack is answered: the
 * first message in the thread, which may reach another instance, runs on that channel's project
 * and under its allow-list. A store failure is passed on, so Slack delivers the event again.
 */
async function record(deps: Pick<ListenerDeps, 'store'>, event: unknown) {
  const thread = threadOf(event);
  if (!thread) return undefined;
  const { at, ...fields } = thread;
  await deps.store.recordAssistantThread(fields, at);
  return thread;
}

/** `assistant_thread_started`: a new thread in the assistant pane; it shows the suggested prompts. */
export function assistantThreadStarted(deps: Pick<ListenerDeps, 'config' | 'slack' | 'store' | 'tasks'>) {
  return async ({ event }: { event: unknown }) => {
    const thread = await record(deps, event);
    const prompts = deps.config.suggestedPrompts;
    if (!thread || prompts.length === 0) return;
    // A courtesy: with every background slot taken it is left out (the tracker logs that).
    deps.tasks.run('suggest prompts', () =>
      deps.slack.assistantThread({ channel: thread.channelId, threadTs: thread.threadTs, prompts }),
    );
  };
}

/** `assistant_thread_context_changed`: the person moved to another channel with the pane open. */
export function assistantThreadContextChanged(deps: Pick<ListenerDeps, 'store'>) {
  return async ({ event }: { event: unknown }) => {
    await record(deps, event);
  };
}

/**
 * The assistant's thread context, kept in the bot's own store (Bolt's default keeps it in the
 * metadata of a message the bot posts in the thread, which this bot does not post).
 */
type ContextStore = NonNullable<AssistantConfig['threadContextStore']>;

export function assistantContextStore(deps: Pick<ListenerDeps, 'store'>): ContextStore {
  return {
    async get({ payload }) {
      const where = payload as { channel?: string; thread_ts?: string };
      const thread =
        where.channel && where.thread_ts
          ? await deps.store.assistantThread(where.channel, where.thread_ts)
          : undefined;
      return thread?.contextChannelId ? { channel_id: thread.contextChannelId } : {};
    },
    async save({ payload }) {
      await record(deps, payload);
    },
  };
}
