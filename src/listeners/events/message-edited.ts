import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { editText } from '../../blocks/edit-texts.js';
import { type NotRecordedDeps, notRecorded } from '../../http/not-recorded.js';
import { followUpText, isHumanMessage } from '../../slack/messages.js';
import type { ListenerDeps } from '../types.js';
import { botUserIdOf, personMessage, sharedFiles } from './event-facts.js';

const editSchema = z.object({
  subtype: z.literal('message_changed'),
  channel: z.string().min(1),
  event_ts: z.string().min(1).optional(),
  // Edits of apps' messages (the bot's own card updates come back as edits) do not parse.
  message: personMessage
    .extend({
      subtype: z.string().optional(),
      edited: z.looseObject({ ts: z.string().min(1) }).optional(),
    })
    .loose(),
  previous_message: z.looseObject({ text: z.string().default('') }).optional(),
});

/**
 * A person edited a message: if it is an instruction still waiting (a reply in its batch window,
 * a mention whose job has not started), the new text replaces it; if the agent has it already,
 * its author is told privately.
 */
export function messageEdited(deps: Pick<ListenerDeps, 'config' | 'jobs'> & NotRecordedDeps) {
  return async ({ event, body, context }: SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs) => {
    const raw = event as unknown as Record<string, unknown>;
    if (raw.subtype !== 'message_changed') return;
    const parsed = editSchema.safeParse(raw);
    if (!parsed.success || !isHumanMessage(parsed.data.message)) return;
    const { message, channel } = parsed.data;
    const botUserId = botUserIdOf(context, body);
    if (botUserId && message.user === botUserId) return;
    // Slack also reports a link unfurled or an attachment added as an edit: the text is the same.
    if (parsed.data.previous_message && parsed.data.previous_message.text === message.text) return;
    const rules = { botUserId, ...deps.config.followUps };
    const threadTs = message.thread_ts ?? message.ts;
    // Recorded before Slack is answered, like the instruction itself: the revised text (or the
    // note to its author) is in the store before the acknowledgement.
    try {
      await deps.jobs.acceptEdit({
        channelId: channel,
        threadTs,
        messageTs: message.ts,
        userId: message.user,
        version: message.edited?.ts ?? parsed.data.event_ts ?? message.ts,
        asReply: followUpText(message.text, rules),
        asInstruction: followUpText(message.text, { ...rules, mode: 'all' }),
        files: sharedFiles(message.files),
      });
    } catch (error) {
      notRecorded(deps, error, context, { channel, user: message.user, threadTs }, editText.notRecorded());
    }
  };
}
