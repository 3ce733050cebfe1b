import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import type { Logger } from '../../logging/logger.js';
import { besideChannel } from '../../slack/ids.js';
import { WHOLE_CONVERSATION } from '../../store/areas.js';
import type { AssistantThreadsStore } from '../../store/types.js';

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
 * the job with the message itself, which Slack sends with its own `app_context` (see the messages
 * feature's direct-message.ts). Said once at `info`, so the shape shows in the logs without a
 * line per move.
 */
export function appContextChanged(deps: {
  logger: Logger;
  store: Pick<AssistantThreadsStore, 'recordAssistantThread'>;
}) {
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
