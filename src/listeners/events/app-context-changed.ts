import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { WHOLE_CONVERSATION } from '../../store/assistant-threads.js';
import type { ListenerDeps } from '../types.js';

/** The entity Slack names a channel with in an agent's context. */
const CHANNEL_ENTITY = 'slack#/types/channel_id';

/**
 * `app_context_changed` as Slack documents it (agent messaging, replacing
 * `assistant_thread_context_changed`): the conversation with the bot (`channel`), and what the
 * person is looking at beside it. Entities this app does not use, or cannot read, are left out.
 */
const contextSchema = z.object({
  channel: z.string().min(1),
  context: z
    .object({
      entities: z
        .array(z.looseObject({ type: z.string(), value: z.unknown() }))
        .optional()
        .catch(undefined),
    })
    .optional()
    .catch(undefined),
  event_ts: z.string().optional(),
});

/**
 * The person moved beside another channel with the bot's Messages tab open (agent messaging).
 * Recorded for the whole conversation before Slack is answered, like the assistant pane's
 * context: a job asked there next runs on that channel's project and under its allow-list.
 */
export function appContextChanged(deps: Pick<ListenerDeps, 'logger' | 'store'>) {
  return async ({ event }: SlackEventMiddlewareArgs<'app_context_changed'> & AllMiddlewareArgs) => {
    const parsed = contextSchema.safeParse(event);
    if (!parsed.success) {
      deps.logger.warn('app_context_changed event not understood', {
        fields: parsed.error.issues.map((i) => i.path.join('.')),
      });
      return;
    }
    const { channel, context, event_ts } = parsed.data;
    const beside = context?.entities?.find((e) => e.type === CHANNEL_ENTITY && typeof e.value === 'string');
    const at = event_ts ? Math.round(Number(event_ts) * 1000) : Number.NaN;
    // A store failure is passed on, so Slack delivers the event again.
    await deps.store.recordAssistantThread(
      {
        channelId: channel,
        threadTs: WHOLE_CONVERSATION,
        contextChannelId: typeof beside?.value === 'string' ? beside.value : null,
      },
      Number.isFinite(at) ? at : Date.now(),
    );
  };
}
