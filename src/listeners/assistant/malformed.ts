import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt';
import { z } from 'zod';
import { BoundedCache } from '../../util/lru.js';
import type { ListenerDeps } from '../types.js';
import { threadSchema } from './thread-events.js';

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
export function screenAssistantEvents(deps: Pick<ListenerDeps, 'logger'>): Middleware<AnyMiddlewareArgs> {
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
