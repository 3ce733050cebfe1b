import { cardTsOf } from '../blocks/status-card.js';
import { mayShowJob } from '../domain/privacy.js';
import type { Mrkdwn } from '../slack/mrkdwn.js';
import type { JobRecord, NewOutboxItem, PostKind, RunOutcome, RunRecord } from '../store/types.js';
import { keys, NOTIFICATION_EVENT_TYPE, OUTBOX_ITEMS, POST_EVENT_TYPE } from './outbox-registry.js';

/** Emoji added to a follow-up once the agent accepted it. */
export const RECEIVED_REACTION = 'eyes';

export {
  BOT_EVENT_TYPES,
  CARD_EVENT_TYPE,
  cardMetadata,
  NOTIFICATION_EVENT_TYPE,
  POST_EVENT_TYPE,
} from './outbox-registry.js';

/** What a thread post says, and about which run. */
export interface ThreadPost {
  job: JobRecord;
  /** Its dedupe key, from {@link keys}: also the key in the message's metadata. */
  key: string;
  /** An outcome of a run, or a notice that an instruction did not (surely) reach the agent. */
  kind: PostKind;
  text: Mrkdwn;
  /** The run the post is about. */
  run?: RunRecord | undefined;
  /** All the runs the post answers, when several merged into one result. */
  covers?: RunRecord[];
  /** Block Kit layout; `text` stays the notification and screen-reader fallback. */
  blocks?: unknown[];
}

/** A thread post about one run: its outcome, or a notice that it did not (surely) reach the agent. */
export function threadPost({ job, key, kind, text, run, covers, blocks }: ThreadPost): NewOutboxItem {
  return {
    jobId: job.id,
    dedupeKey: key,
    payload: {
      type: 'post',
      channel: job.channelId,
      threadTs: job.threadTs ?? '',
      text,
      ...(blocks ? { blocks } : {}),
      eventType: POST_EVENT_TYPE,
      about: {
        kind,
        run: run?.seq ?? null,
        source: run?.messageTs ?? null,
        ...(covers && covers.length > 1
          ? {
              covers: covers.map((r) => r.seq).join(','),
              sources: covers.map((r) => r.messageTs ?? '').join(','),
            }
          : {}),
      },
    },
  };
}

/**
 * Re-renders the status card from the job as it is when the item is delivered (and the status
 * emoji on the thread's root).
 */
export function cardUpdate(job: JobRecord): NewOutboxItem[] {
  const ts = cardTsOf(job);
  return ts
    ? [
        {
          jobId: job.id,
          dedupeKey: OUTBOX_ITEMS.cardUpdate.key,
          payload: { type: 'update_root', channel: job.channelId, ts },
        },
      ]
    : [];
}

export function receivedReaction(job: JobRecord, run: RunRecord): NewOutboxItem[] {
  return run.messageTs
    ? [
        {
          jobId: job.id,
          dedupeKey: keys.received({ runId: run.id }),
          payload: { type: 'reaction', channel: job.channelId, ts: run.messageTs, name: RECEIVED_REACTION },
        },
      ]
    : [];
}

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
}: OutcomeNotification): NewOutboxItem {
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
  return 'channel' in to
    ? {
        jobId: job.id,
        dedupeKey: keys.notification(runKey),
        payload: { type: 'notify', channel: to.channel, ...common },
      }
    : {
        jobId: job.id,
        dedupeKey: keys.requesterDm(runKey),
        payload: { type: 'direct', user: to.user, ...common },
      };
}

/** Where to tell one person something privately. */
export interface PrivateTarget {
  channelId: string;
  userId: string;
  threadTs: string | null;
  /** A slash command's response_url, preferred while it is valid. */
  responseUrl: string | null;
}

/** A private note to one person; `dedupeKey` from {@link keys}. */
export function privateNote(
  jobId: number | null,
  dedupeKey: string,
  to: PrivateTarget,
  text: Mrkdwn,
): NewOutboxItem {
  return {
    jobId,
    dedupeKey,
    payload: to.responseUrl
      ? {
          type: 'respond',
          responseUrl: to.responseUrl,
          text,
          fallback: { channel: to.channelId, user: to.userId },
        }
      : { type: 'ephemeral', channel: to.channelId, user: to.userId, threadTs: to.threadTs, text },
  };
}
