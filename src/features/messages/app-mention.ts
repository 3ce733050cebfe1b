import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import type { Config } from '../../config/config.js';
import { logUnreadable, type NotRecordedDeps, notRecorded } from '../../http/not-recorded.js';
import type { JobService } from '../../jobs/job-service.js';
import { carryOnMessage } from '../../jobs/job-service.js';
import type { MentionOutcome } from '../../jobs/requests.js';
import {
  authorTeam,
  botUserIdOf,
  followUpText,
  fromApp,
  isHumanMessage,
  personMessage,
  sharedFiles,
} from '../../slack/messages.js';
import { md } from '../../slack/mrkdwn.js';
import { type MessageRecordDeps, recordMention } from './record.js';

const mentionSchema = personMessage.extend({ channel: z.string().min(1) });

/** What a mention with nothing after it is answered with, privately: how to use one. */
export const bareMentionText = () =>
  md`:wave: Tell me what to do after the mention, e.g. \`@docs-agent Document the new rate limits\`. Inside a thread, I read the earlier messages as context. Nothing was started.`;

/** What a mention is read, recorded and carried on with. */
export type MentionDeps = NotRecordedDeps &
  MessageRecordDeps & {
    config: Pick<Config, 'followUps'>;
    jobs: Pick<JobService, 'recordMessage' | 'startJob' | 'processReply' | 'handBack'>;
  };

/**
 * `@docs-agent <instruction>`: starts a job where the conversation is (the mention's message,
 * or the thread it is in, becomes the job's thread); in a thread that has a job, a follow-up.
 */
export function appMention(deps: MentionDeps) {
  return async ({ event, body, context }: SlackEventMiddlewareArgs<'app_mention'> & AllMiddlewareArgs) => {
    const raw = event as unknown as Record<string, unknown>;
    if (!isHumanMessage(raw)) return;
    const parsed = mentionSchema.safeParse(raw);
    if (!parsed.success) {
      // Every mention is meant for the bot; only apps' are not read.
      if (!fromApp(raw)) logUnreadable(deps.logger, 'mention', raw, parsed.error);
      return;
    }
    const mention = parsed.data;
    const botUserId = botUserIdOf(context, body);
    if (botUserId && mention.user === botUserId) return;
    // A mention is always meant for the bot; only an aside is not.
    const instruction = followUpText(mention.text, { ...deps.config.followUps, botUserId, mode: 'all' });
    if (instruction === undefined) return;
    const teamId = authorTeam(raw, body) ?? context.teamId ?? '';
    const thread = mention.thread_ts && mention.thread_ts !== mention.ts ? mention.thread_ts : undefined;

    const where = { channel: mention.channel, user: mention.user, ...(thread ? { threadTs: thread } : {}) };
    // Recorded before Slack is answered (the receiver answers after this listener): a crash
    // cannot lose it, and Slack's retry is recognized by the message's ts.
    let outcome: MentionOutcome;
    try {
      outcome = await recordMention(deps, {
        teamId,
        channelId: mention.channel,
        userId: mention.user,
        text: instruction,
        messageTs: mention.ts,
        threadTs: thread,
        files: sharedFiles(raw.files),
      });
    } catch (error) {
      return notRecorded(deps, error, context, where);
    }
    if (!outcome && !instruction) {
      // A bare mention where no job runs: say how to use it, privately. Only a courtesy, so
      // when every background slot is taken it is left out (the tracker logs that).
      deps.tasks.run('explain a bare mention', () =>
        deps.slack.postEphemeral({ ...where, text: bareMentionText() }),
      );
      return;
    }
    carryOnMessage(deps, outcome, teamId);
  };
}
