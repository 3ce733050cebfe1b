import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import type { Config } from '../../config/config.js';
import { logUnreadable, type NotRecordedDeps, notRecorded } from '../../http/not-recorded.js';
import type { JobService } from '../../jobs/job-service.js';
import { runRecorded } from '../../jobs/job-service.js';
import { isDirectMessage } from '../../slack/ids.js';
import {
  authorTeam,
  botUserIdOf,
  followUpText,
  fromApp,
  isHumanMessage,
  mentionsUser,
  personMessage,
  sharedFiles,
} from '../../slack/messages.js';
import type { JobsStore } from '../../store/types.js';

const replySchema = personMessage.extend({
  subtype: z.string().optional(),
  thread_ts: z.string().min(1),
  channel: z.string().min(1),
});

/** What a reply in a thread is read, recorded and forwarded with. */
export type ThreadReplyDeps = NotRecordedDeps & {
  config: Pick<Config, 'followUps'>;
  jobs: Pick<JobService, 'acceptReply' | 'processReply' | 'handBack'>;
  store: Pick<JobsStore, 'findJobByThread'>;
};

/**
 * Whether an event that did not parse looks like a person's reply in a job's thread (a direct
 * message is the direct-message listener's to report).
 */
async function inJobThread(
  deps: Pick<ThreadReplyDeps, 'store'>,
  raw: Record<string, unknown>,
): Promise<boolean> {
  const { channel, thread_ts: threadTs } = raw;
  if (typeof channel !== 'string' || typeof threadTs !== 'string' || threadTs === raw.ts) return false;
  if (fromApp(raw) || isDirectMessage(channel)) return false;
  const job = await deps.store.findJobByThread(channel, threadTs).catch(() => undefined);
  return job !== undefined;
}

/** A human reply in a thread: sent to the thread's job, if it has one. */
export function threadReply(deps: ThreadReplyDeps) {
  return async ({ event, body, context }: SlackEventMiddlewareArgs<'message'> & AllMiddlewareArgs) => {
    const raw = event as unknown as Record<string, unknown>;
    if (!isHumanMessage(raw)) return;
    const parsed = replySchema.safeParse(raw);
    if (!parsed.success) {
      if (await inJobThread(deps, raw)) logUnreadable(deps.logger, 'reply', raw, parsed.error);
      return;
    }
    const reply = parsed.data;
    if (reply.thread_ts === reply.ts) return;
    const botUserId = botUserIdOf(context, body);
    if (botUserId && reply.user === botUserId) return;
    // Asides are for the people in the thread, never for the agent; in mention mode only replies
    // that mention the bot are instructions. (The same message also arrives as app_mention; the
    // store records it once, by its ts.)
    const text = followUpText(reply.text, { botUserId, ...deps.config.followUps });
    if (text === undefined) return;

    const teamId = authorTeam(raw, body);
    // Recorded before the acknowledgement (the receiver answers Slack after this listener). A
    // re-delivery, to this instance or another, is recognized by the message's ts in that same
    // write, so a crash between recognizing and recording cannot swallow the reply.
    let runId: number | undefined;
    try {
      runId = await deps.jobs.acceptReply({
        teamId,
        channelId: reply.channel,
        threadTs: reply.thread_ts,
        messageTs: reply.ts,
        userId: reply.user,
        text,
        mentionsBot: botUserId !== undefined && mentionsUser(reply.text, botUserId),
        files: sharedFiles(raw.files),
      });
    } catch (error) {
      return notRecorded(deps, error, context, {
        channel: reply.channel,
        user: reply.user,
        threadTs: reply.thread_ts,
      });
    }
    if (runId !== undefined)
      runRecorded(deps, 'forward reply', () => deps.jobs.processReply(runId, teamId), { runId });
  };
}
