import { z } from 'zod';
import { mayShowJob } from '../../domain/privacy.js';
import type { Logger } from '../../logging/logger.js';
import { isChannelClosed, SlackCallError } from '../../slack/caller.js';
import type { Blocks, SlackGateway } from '../../slack/gateway.js';
import { CLOCK_MARGIN_S } from '../../slack/message-listing.js';
import { type Mrkdwn, recordedMrkdwn } from '../../slack/mrkdwn.js';
import type { JobRecord, NewOutboxItem, OutboxItem, RunOutcome, RunRecord } from '../../store/types.js';
import { type KindSender, outboxKind, unkeyedPostKey } from '../outbox-kind.js';

/** Metadata event type of an outcome told outside the job's thread (a channel notification, a DM). */
export const NOTIFICATION_EVENT_TYPE = 'docs_agent_notification';

/** What a notification says, wherever it goes. */
const told = {
  text: z.string(),
  /** Written into the message's metadata so a re-post after a crash can be detected. */
  eventType: z.string(),
  /** More facts written into the metadata (the run, the outcome, the job's thread); nothing secret. */
  fields: z.record(z.string(), z.union([z.string(), z.number(), z.null()])).optional(),
  /** Block Kit layout; `text` stays the notification and screen-reader fallback. */
  blocks: z.array(z.unknown()).optional(),
};

/** A top-level post in a notification channel. */
const notifyPayload = z.looseObject({ type: z.literal('notify'), channel: z.string(), ...told });
/** A direct message to the requester, its conversation opened when it is delivered. */
const directPayload = z.looseObject({ type: z.literal('direct'), user: z.string(), ...told });

type Notification = z.infer<typeof notifyPayload> | z.infer<typeof directPayload>;
type RunSeqKey = { jobId: number; runSeq: number };

/** The requester cannot get a direct message from the bot: gone, or not a person. */
const PERSON_UNREACHABLE = new Set(['user_not_found', 'user_disabled', 'user_not_visible', 'cannot_dm_bot']);

/** What a run's outcome told outside its thread says, and where it goes. */
export interface OutcomeNotification {
  job: JobRecord;
  /** The run whose outcome it tells (the thread's outcome post is about the same run). */
  run: RunRecord;
  outcome: RunOutcome;
  /** A top-level post in a channel, or a direct message to a person. */
  to: { channel: string } | { user: string };
  text: Mrkdwn;
  blocks?: unknown[];
}

/**
 * A run's outcome in the notification channel, or sent to the requester by direct message. Its
 * metadata names the run and the thread, never a text.
 */
export function outcomeNotification({
  job,
  run,
  outcome,
  to,
  text,
  blocks,
}: OutcomeNotification): NewOutboxItem<Notification> {
  const runKey = { jobId: job.id, runSeq: run.seq };
  // Metadata is readable by anyone who can read the message: a channel that may not see the job
  // is not told when its thread started either.
  const shown = !('channel' in to) || mayShowJob(job, { channelId: to.channel });
  const common = {
    text,
    ...(blocks ? { blocks } : {}),
    eventType: NOTIFICATION_EVENT_TYPE,
    fields: { run: run.seq, outcome, thread: shown ? job.threadTs : null },
  };
  const { items } = notifications;
  return 'channel' in to
    ? {
        jobId: job.id,
        dedupeKey: items.notification(runKey),
        payload: { type: 'notify', channel: to.channel, ...common },
      }
    : {
        jobId: job.id,
        dedupeKey: items.requesterDm(runKey),
        payload: { type: 'direct', user: to.user, ...common },
      };
}

/**
 * Posts a channel notification or a requester's direct message once: after an attempt that may
 * have reached Slack, the conversation's recent history is read for its metadata first. Resolves
 * to Slack's error code when the item is given up (the bot cannot post there, and no retry will
 * change that), undefined when it is in Slack.
 */
export function createNotificationSender({
  slack,
  logger,
}: {
  slack: SlackGateway;
  logger: Logger;
}): KindSender<Notification> {
  // A channel the bot was never invited to would otherwise log on every outcome.
  const warned = new Set<string>();

  async function post(channel: string, item: OutboxItem<Notification>): Promise<void> {
    const { payload } = item;
    const metadata = {
      eventType: payload.eventType,
      key: item.dedupeKey ?? unkeyedPostKey(item.id),
      ...(payload.fields ? { fields: payload.fields } : {}),
    };
    if (item.attempts > 1) {
      const found = await slack
        .findInChannel({ channel, oldest: Math.floor(item.createdAt / 1000) - CLOCK_MARGIN_S, metadata })
        .catch((error: unknown) => {
          // As for thread posts: ask again later, unless Slack can never say (scope, method).
          if (error instanceof SlackCallError && error.permanent) return undefined;
          throw error;
        });
      if (found) return;
    }
    await slack.postMessage({
      channel,
      text: recordedMrkdwn(payload.text),
      ...(payload.blocks ? { blocks: payload.blocks as Blocks } : {}),
      metadata,
    });
  }

  function giveUp(
    item: OutboxItem,
    where: { channel: string } | { user: string },
    code: string,
    message: string,
  ): string {
    const context = { ...where, outboxId: item.id, jobId: item.jobId, code };
    const seen = `${'channel' in where ? where.channel : where.user}:${code}`;
    if (warned.has(seen)) logger.debug(message, context);
    else {
      warned.add(seen);
      logger.warn(message, context);
    }
    return code;
  }

  return {
    async send(item) {
      const { payload } = item;
      try {
        if (payload.type === 'notify') await post(payload.channel, item);
        else await post(await slack.openDirect(payload.user), item);
        return undefined;
      } catch (error) {
        if (!(error instanceof SlackCallError)) throw error;
        // The notification channel is closed to the bot until someone invites it (or picks another).
        if (payload.type === 'notify' && isChannelClosed(error.code))
          return giveUp(
            item,
            { channel: payload.channel },
            error.code,
            'cannot post in the notification channel (NOTIFY_CHANNEL_ID); invite the bot there. Notifications to it are given up',
          );
        if (payload.type === 'direct' && (PERSON_UNREACHABLE.has(error.code) || isChannelClosed(error.code)))
          return giveUp(
            item,
            { user: payload.user },
            error.code,
            'cannot send the requester a direct message; it is given up',
          );
        throw error;
      }
    },
  };
}

/** A run's outcome told outside its thread, found again in the conversation's history after a crash. */
export const notifications = outboxKind({
  payloads: [notifyPayload, directPayload],
  eventType: NOTIFICATION_EVENT_TYPE,
  items: {
    /** A run's outcome announced in the notification channel (`NOTIFY_CHANNEL_ID`). */
    notification: ({ jobId, runSeq }: RunSeqKey) => `notify:${runSeq}:${jobId}`,
    /** A run's outcome sent to the requester by direct message (`NOTIFY_REQUESTER=dm`). */
    requesterDm: ({ jobId, runSeq }: RunSeqKey) => `requester-dm:${runSeq}:${jobId}`,
  },
  sender: createNotificationSender,
});
