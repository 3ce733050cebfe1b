import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import type { Config } from '../../config/config.js';
import { logUnreadable, type NotRecordedDeps, notRecorded } from '../../http/not-recorded.js';
import { userIdSchema } from '../../slack/ids.js';
import {
  botUserIdOf,
  followUpText,
  isHumanMessage,
  personMessage,
  sharedFiles,
} from '../../slack/messages.js';
import { type EditDeps, editText, recordDelete, recordEdit } from './record.js';

/** What an edit or deletion is read and recorded with. */
export type EditListenerDeps = EditDeps & NotRecordedDeps & { config: Pick<Config, 'followUps'> };

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
export function messageEdited(deps: EditListenerDeps) {
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
      await recordEdit(deps, {
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

const previousSchema = z.looseObject({
  subtype: z.string().optional(),
  user: userIdSchema,
  thread_ts: z.string().min(1).optional(),
  bot_id: z.undefined().optional(),
});

// `previous_message` may be missing: Slack documents `message_deleted` without it. The store's own
// record of the message then says which instruction it was.
const deleteSchema = z.union([
  z.object({
    subtype: z.literal('message_deleted'),
    channel: z.string().min(1),
    deleted_ts: z.string().min(1),
    previous_message: previousSchema.optional(),
  }),
  // A thread's root deleted while it has replies stays as a "This message was deleted." tombstone:
  // Slack reports that as an edit of the message.
  z
    .object({
      subtype: z.literal('message_changed'),
      channel: z.string().min(1),
      message: z.looseObject({ subtype: z.literal('tombstone'), ts: z.string().min(1) }),
      previous_message: previousSchema.optional(),
    })
    .transform((e) => ({ ...e, deleted_ts: e.message.ts })),
]);

/**
 * A person deleted a message: if it is an instruction still waiting (a reply in its batch
 * window, a mention whose job has not started), it is taken back; if the agent has it already,
 * its author is told privately.
 */
export function messageDeleted(deps: EditDeps & NotRecordedDeps) {
  return async ({ event, context }: SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs) => {
    const raw = event as unknown as Record<string, unknown>;
    if (raw.subtype !== 'message_deleted' && raw.subtype !== 'message_changed') return;
    const parsed = deleteSchema.safeParse(raw);
    if (!parsed.success) {
      // Most `message_changed` events are edits, not tombstones: only a deletion is worth a word.
      if (raw.subtype === 'message_deleted') logUnreadable(deps.logger, 'deletion', raw, parsed.error);
      return;
    }
    const { channel, deleted_ts: messageTs, previous_message: previous } = parsed.data;
    if (previous && !isHumanMessage(previous)) return;
    const threadTs = previous ? (previous.thread_ts ?? messageTs) : undefined;
    const userId = previous?.user;
    // Recorded before Slack is answered: a restart cannot send what its author took back.
    try {
      await recordDelete(deps, { channelId: channel, threadTs, messageTs, userId });
    } catch (error) {
      const where = { channel, user: userId, threadTs: threadTs ?? messageTs };
      notRecorded(deps, error, context, where, editText.notRecorded());
    }
  };
}
