import { type AnyMiddlewareArgs, Assistant, type AssistantConfig, type Middleware } from '@slack/bolt';
import { z } from 'zod';
import type { Config } from '../../config/config.js';
import type { Logger } from '../../logging/logger.js';
import type { SlackGateway } from '../../slack/gateway.js';
import type { AssistantThreadsStore } from '../../store/types.js';
import { BoundedCache } from '../../util/lru.js';
import type { TaskTracker } from '../../util/tasks.js';

/*
 * The legacy assistant pane (Slack's Assistant side panel and its threads), kept beside agent
 * messaging until Slack retires it: its thread events, its thread context, and the screening of
 * events Bolt's `Assistant` cannot read.
 */

/** What the assistant pane records its threads with, and suggests prompts through. */
export interface PaneDeps {
  config: Pick<Config, 'suggestedPrompts'>;
  slack: Pick<SlackGateway, 'assistantThread'>;
  store: Pick<AssistantThreadsStore, 'assistantThread' | 'recordAssistantThread'>;
  tasks: Pick<TaskTracker, 'run'>;
}

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
async function record(deps: Pick<PaneDeps, 'store'>, event: unknown) {
  const thread = threadOf(event);
  if (!thread) return undefined;
  const { at, ...fields } = thread;
  await deps.store.recordAssistantThread(fields, at);
  return thread;
}

/** `assistant_thread_started`: a new thread in the assistant pane; it shows the suggested prompts. */
export function assistantThreadStarted(deps: PaneDeps) {
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
export function assistantThreadContextChanged(deps: Pick<PaneDeps, 'store'>) {
  return async ({ event }: { event: unknown }) => {
    await record(deps, event);
  };
}

/**
 * The assistant's thread context, kept in the bot's own store (Bolt's default keeps it in the
 * metadata of a message the bot posts in the thread, which this bot does not post).
 */
type ContextStore = NonNullable<AssistantConfig['threadContextStore']>;

export function assistantContextStore(deps: Pick<PaneDeps, 'store'>): ContextStore {
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

/** Event ids of malformed events already logged: enough for Slack's three re-deliveries of each. */
const LOGGED_EVENT_IDS = 1_000;
/** Slack re-delivers within minutes; an hour covers every retry of one event. */
const LOGGED_EVENT_TTL_MS = 60 * 60_000;

/** What Bolt's `Assistant` needs of a message in an assistant thread: its conversation and thread. */
const threadMessageSchema = z.object({ channel: z.string().min(1), thread_ts: z.string().min(1) });

/**
 * The schema an event must meet if Bolt's `Assistant` takes it as its own, else undefined. The
 * test is Bolt's own (`isAssistantEvent`, `matchesConstraints` in its Assistant.js): both thread
 * events, and a message with a thread in a direct message that is a person's plain message.
 */
function assistantSchemaFor(payload: Record<string, unknown>): z.ZodType | undefined {
  if (payload.type === 'assistant_thread_started' || payload.type === 'assistant_thread_context_changed') {
    return threadSchema;
  }
  const plain = payload.subtype === undefined || payload.subtype === 'file_share';
  if (payload.type === 'message' && 'channel' in payload && 'thread_ts' in payload) {
    return payload.channel_type === 'im' && plain ? threadMessageSchema : undefined;
  }
  return undefined;
}

/**
 * Stops an assistant event whose thread cannot be read before Bolt's `Assistant` sees it. Bolt
 * throws on one (it looks up the thread before any listener runs), which answered Slack 500, and
 * Slack delivered the same unreadable event three more times. It is answered 200 instead (Events
 * API requests are acknowledged before middleware runs), logged once per event id, and dropped.
 */
export function screenAssistantEvents(deps: { logger: Logger }): Middleware<AnyMiddlewareArgs> {
  const logged = new BoundedCache<true>(LOGGED_EVENT_IDS, LOGGED_EVENT_TTL_MS);
  return async ({ payload, body, next }) => {
    const event = payload as unknown as Record<string, unknown>;
    const schema =
      (body as { type?: unknown }).type === 'event_callback' ? assistantSchemaFor(event) : undefined;
    const parsed = schema?.safeParse(event);
    if (!parsed || parsed.success) return next();
    const eventId = (body as { event_id?: unknown }).event_id;
    const id = typeof eventId === 'string' ? eventId.slice(0, 64) : undefined;
    if (id && logged.get(id)) return;
    if (id) logged.set(id, true);
    deps.logger.warn('assistant event not understood; answered and dropped', {
      type: String(event.type).slice(0, 64),
      eventId: id,
      // Where the event differs from what is read, never its values: a person's words are there.
      issues: parsed.error.issues.map((issue) => `${issue.path.join('.') || '(event)'}: ${issue.message}`),
    });
  };
}

/**
 * Slack's assistant pane (Bolt's `Assistant`), its thread events recorded here. Bolt routes every
 * threaded direct message to it, the pane's and any other, so its `userMessage` is the
 * direct-message listener, handed in by the table of listeners (features do not import each
 * other). Registered after {@link screenAssistantEvents}.
 */
export function assistantPane(deps: PaneDeps, userMessage: AssistantConfig['userMessage']): Assistant {
  return new Assistant({
    threadContextStore: assistantContextStore(deps),
    threadStarted: assistantThreadStarted(deps),
    threadContextChanged: assistantThreadContextChanged(deps),
    userMessage,
  });
}
