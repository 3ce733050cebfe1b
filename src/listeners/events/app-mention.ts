import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { text as say } from '../../jobs/messages.js';
import { isAside, withoutMention } from '../../slack/mentions.js';
import type { ListenerDeps } from '../types.js';
import { botUserIdOf } from './bot-user.js';
import { notRecorded } from './not-recorded.js';

const HUMAN_SUBTYPES = new Set([undefined, 'thread_broadcast', 'file_share']);

const mentionSchema = z.object({
  user: z.string().min(1),
  text: z.string().default(''),
  ts: z.string().min(1),
  channel: z.string().min(1),
  thread_ts: z.string().min(1).optional(),
  // Other apps mentioning the bot are not people giving instructions.
  bot_id: z.undefined().optional(),
});

/**
 * `@docs-agent <instruction>`: starts a job where the conversation is (the mention's message,
 * or the thread it is in, becomes the job's thread); in a thread that has a job, a follow-up.
 */
export function appMention(deps: ListenerDeps) {
  return async ({ event, body, context }: SlackEventMiddlewareArgs<'app_mention'> & AllMiddlewareArgs) => {
    const raw = event as unknown as Record<string, unknown>;
    // "Also send to channel" and file shares are mentions too; edits and bot messages are not.
    if (!HUMAN_SUBTYPES.has(raw.subtype as string | undefined)) return;
    const parsed = mentionSchema.safeParse(raw);
    if (!parsed.success) return;
    const mention = parsed.data;
    const botUserId = botUserIdOf(context, body);
    if (botUserId && mention.user === botUserId) return;
    const instruction = botUserId ? withoutMention(mention.text, botUserId) : mention.text;
    if (isAside(instruction, deps.config.followUps.asideMarker)) return;
    const teamId =
      (raw.user_team as string | undefined) ?? (body as { team_id?: string }).team_id ?? context.teamId ?? '';
    const thread = mention.thread_ts && mention.thread_ts !== mention.ts ? mention.thread_ts : undefined;

    const where = { channel: mention.channel, user: mention.user, ...(thread ? { threadTs: thread } : {}) };
    // Recorded before Slack is answered (the receiver answers after this listener): a crash
    // cannot lose it, and Slack's retry is recognized by the message's ts.
    let outcome: Awaited<ReturnType<typeof deps.jobs.acceptMention>>;
    try {
      outcome = await deps.jobs.acceptMention({
        teamId,
        channelId: mention.channel,
        userId: mention.user,
        text: instruction,
        messageTs: mention.ts,
        threadTs: thread,
      });
    } catch (error) {
      return notRecorded(deps, error, context, where);
    }
    if (!outcome && !instruction) {
      // A bare mention where no job runs: say how to use it, privately.
      deps.tasks.run('explain a bare mention', () =>
        deps.slack.postEphemeral({ ...where, text: say.bareMention() }),
      );
      return;
    }
    if (outcome && 'job' in outcome) deps.tasks.run('start job', () => deps.jobs.startJob(outcome.job));
    if (outcome && 'reply' in outcome)
      deps.tasks.run('forward reply', () => deps.jobs.processReply(outcome.reply, teamId));
  };
}
