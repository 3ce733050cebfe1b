import { z } from 'zod';
import type { JobRecord, NewOutboxItem, OutboxItem, RunRecord } from '../../store/types.js';
import { outboxKind } from '../outbox-kind.js';

/** Emoji added to a follow-up once the agent accepted it. */
export const RECEIVED_REACTION = 'eyes';

/** An emoji `name` put on the message at `ts`. */
const reactionPayload = z.looseObject({
  type: z.literal('reaction'),
  channel: z.string(),
  ts: z.string(),
  name: z.string(),
});

type ReactionPayload = z.infer<typeof reactionPayload>;

/** The emoji on a follow-up the agent accepted: nothing for an instruction that has no message. */
export function receivedReaction(job: JobRecord, run: RunRecord): NewOutboxItem<ReactionPayload>[] {
  return run.messageTs
    ? [
        {
          jobId: job.id,
          dedupeKey: reactions.items.received({ runId: run.id }),
          payload: { type: 'reaction', channel: job.channelId, ts: run.messageTs, name: RECEIVED_REACTION },
        },
      ]
    : [];
}

/** Emoji the bot puts on a message: one sent again (a retry after a lost answer) is already there. */
export const reactions = outboxKind({
  payloads: [reactionPayload],
  items: {
    /** The emoji on a follow-up the agent accepted. */
    received: ({ runId }: { runId: number }) => `received:${runId}`,
  },
  sender: ({ slack }) => ({
    async send({ payload }: OutboxItem<ReactionPayload>): Promise<undefined> {
      await slack.addReaction({ channel: payload.channel, ts: payload.ts, name: payload.name });
    },
  }),
});
