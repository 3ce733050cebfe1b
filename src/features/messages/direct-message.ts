import type { AllMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import type { Config } from '../../config/config.js';
import { logUnreadable, type NotRecordedDeps, notRecorded } from '../../http/not-recorded.js';
import type { JobService } from '../../jobs/job-service.js';
import { carryOnMessage } from '../../jobs/job-service.js';
import type { MentionOutcome } from '../../jobs/requests.js';
import { besideChannel, isDirectMessage } from '../../slack/ids.js';
import {
  authorTeam,
  botUserIdOf,
  followUpText,
  fromApp,
  isHumanMessage,
  personMessage,
  sharedFiles,
} from '../../slack/messages.js';
import { WHOLE_CONVERSATION } from '../../store/areas.js';
import type { AssistantThreadsStore } from '../../store/types.js';
import { type MessageRecordDeps, recordDirect } from './record.js';

// The bot's own posts (its status card, outcomes) and other apps' do not parse.
const directSchema = personMessage.extend({ channel_type: z.literal('im'), channel: z.string().min(1) });

/** What a message listener is given, from `app.event('message')` or the assistant's `userMessage`. */
type MessageArgs = Pick<AllMiddlewareArgs, 'context'> & { event: unknown; body: unknown };

/** What a direct message is read, recorded and carried on with. */
export type DirectMessageDeps = NotRecordedDeps &
  MessageRecordDeps & {
    config: Pick<Config, 'followUps'>;
    jobs: Pick<JobService, 'recordMessage' | 'usePane' | 'startJob' | 'processReply' | 'handBack'>;
    store: Pick<AssistantThreadsStore, 'recordAssistantThread'>;
  };

/**
 * What the person was looking at when they wrote (agent messaging): Slack sends it with the
 * message as `app_context`, the same context `app_context_changed` reports, whose own example
 * names no conversation to record it for. Recorded as the conversation's context before the
 * message is accepted, so the job runs beside that channel, as it would after the event. A
 * message without it (no agent messaging) changes nothing.
 */
async function recordAppContext(
  deps: Pick<DirectMessageDeps, 'store'>,
  channel: string,
  raw: Record<string, unknown>,
  ts: string,
): Promise<void> {
  if (raw.app_context === undefined) return;
  const at = Math.round(Number(ts) * 1000);
  await deps.store.recordAssistantThread(
    { channelId: channel, threadTs: WHOLE_CONVERSATION, contextChannelId: besideChannel(raw.app_context) },
    Number.isFinite(at) ? at : Date.now(),
  );
}

/**
 * A message to the bot in a direct message (the App Home "Messages" tab, or a thread of the
 * assistant pane): at the top it starts a job whose thread is that message; in a thread, it
 * starts one there, or is a follow-up where the thread has a job, exactly as in a channel.
 * Every message in a direct message is meant for the bot: only asides are not.
 */
export function directMessage(deps: DirectMessageDeps) {
  return async ({ event, body, context }: MessageArgs) => {
    const raw = event as Record<string, unknown>;
    if (!isHumanMessage(raw)) return;
    const parsed = directSchema.safeParse(raw);
    if (!parsed.success) {
      const inDirect =
        raw.channel_type === 'im' || (typeof raw.channel === 'string' && isDirectMessage(raw.channel));
      if (inDirect && !fromApp(raw)) logUnreadable(deps.logger, 'direct message', raw, parsed.error);
      return;
    }
    if (!isDirectMessage(parsed.data.channel)) return;
    const message = parsed.data;
    const botUserId = botUserIdOf(context, body);
    if (botUserId && message.user === botUserId) return;
    const instruction = followUpText(message.text, { ...deps.config.followUps, botUserId, mode: 'all' });
    if (!instruction) return;
    const teamId = authorTeam(raw, body) ?? context.teamId ?? '';
    const thread = message.thread_ts && message.thread_ts !== message.ts ? message.thread_ts : undefined;

    // Recorded before Slack is answered (the receiver answers after this listener): a crash
    // cannot lose it, and Slack's retry is recognized by the message's ts.
    let outcome: MentionOutcome;
    try {
      await recordAppContext(deps, message.channel, raw, message.ts);
      outcome = await recordDirect(deps, {
        teamId,
        channelId: message.channel,
        userId: message.user,
        text: instruction,
        messageTs: message.ts,
        threadTs: thread,
        files: sharedFiles(raw.files),
      });
    } catch (error) {
      return notRecorded(deps, error, context, {
        channel: message.channel,
        user: message.user,
        ...(thread ? { threadTs: thread } : {}),
      });
    }
    carryOnMessage(deps, outcome, teamId);
  };
}
