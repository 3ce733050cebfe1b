import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { SLACK_ID } from '../../slack/ids.js';
import { WHOLE_CONVERSATION } from '../../store/assistant-threads.js';
import type { ListenerDeps } from '../types.js';

/** The entities Slack names a channel with in an agent's context: a channel, or a message in one. */
const CHANNEL_ENTITY = 'slack#/types/channel_id';
const MESSAGE_ENTITY = 'slack#/types/message_context';

const channelId = z.string().regex(SLACK_ID);
/** What the person is looking at: entities ordered by relevance; `{}` when nothing is in view. */
const contextSchema = z.object({
  entities: z
    .array(z.looseObject({ type: z.unknown(), value: z.unknown() }))
    .optional()
    .catch(undefined),
});

/**
 * The channel the person is beside, read from an agent's context (`context` of
 * `app_context_changed`, `app_context` of a message to the bot): the most relevant entity that
 * names one, a channel or a message in a channel (a thread). Null when none does, or the context
 * cannot be read; entities this app does not use are passed over.
 */
export function besideChannel(context: unknown): string | null {
  const parsed = contextSchema.safeParse(context);
  for (const entity of parsed.success ? (parsed.data.entities ?? []) : []) {
    const value =
      entity.type === CHANNEL_ENTITY
        ? entity.value
        : entity.type === MESSAGE_ENTITY
          ? (entity.value as { channel_id?: unknown } | null)?.channel_id
          : undefined;
    const channel = channelId.safeParse(value);
    if (channel.success) return channel.data;
  }
  return null;
}

/**
 * `app_context_changed` (agent messaging, replacing `assistant_thread_context_changed`). Slack's
 * own example carries only `context`: no `channel` (the conversation with the bot), no `user`, no
 * `event_ts`. @slack/types adds `channel` and `user`; either shape is read.
 */
const eventSchema = z.object({
  channel: z.string().min(1).optional(),
  context: z.unknown(),
  event_ts: z.string().optional(),
});

/**
 * The person moved beside another channel with the bot's Messages tab open (agent messaging).
 * With the conversation named, recorded for it before Slack is answered, like the assistant
 * pane's context: a job asked there next runs on that channel's project and under its allow-list.
 * Without it (Slack's documented example) there is nothing to record it for: the context reaches
 * the job with the message itself, which Slack sends with its own `app_context` (see
 * direct-message.ts). Said once at `info`, so the shape shows in the logs without a line per move.
 */
export function appContextChanged(deps: Pick<ListenerDeps, 'logger' | 'store'>) {
  let toldNoConversation = false;
  return async ({ event }: SlackEventMiddlewareArgs<'app_context_changed'> & AllMiddlewareArgs) => {
    const parsed = eventSchema.safeParse(event);
    if (!parsed.success) {
      deps.logger.warn('app_context_changed event not understood', {
        fields: parsed.error.issues.map((i) => i.path.join('.')),
      });
      return;
    }
    const { channel, context, event_ts } = parsed.data;
    if (channel === undefined) {
      const line = 'app_context_changed names no conversation: the context each message carries is used';
      if (toldNoConversation) deps.logger.debug(line, { fields: ['channel'] });
      else deps.logger.info(line, { fields: ['channel'] });
      toldNoConversation = true;
      return;
    }
    const at = event_ts ? Math.round(Number(event_ts) * 1000) : Number.NaN;
    // A store failure is passed on, so Slack delivers the event again.
    await deps.store.recordAssistantThread(
      { channelId: channel, threadTs: WHOLE_CONVERSATION, contextChannelId: besideChannel(context) },
      Number.isFinite(at) ? at : Date.now(),
    );
  };
}
