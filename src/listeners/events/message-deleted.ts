import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { editText } from '../../blocks/edit-texts.js';
import { type NotRecordedDeps, notRecorded } from '../../http/not-recorded.js';
import { userIdSchema } from '../../slack/ids.js';
import { isHumanMessage } from '../../slack/messages.js';
import type { ListenerDeps } from '../types.js';
import { logUnreadable } from './unreadable.js';

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
export function messageDeleted(deps: Pick<ListenerDeps, 'jobs'> & NotRecordedDeps) {
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
      await deps.jobs.acceptDelete({ channelId: channel, threadTs, messageTs, userId });
    } catch (error) {
      const where = { channel, user: userId, threadTs: threadTs ?? messageTs };
      notRecorded(deps, error, context, where, editText.notRecorded());
    }
  };
}
