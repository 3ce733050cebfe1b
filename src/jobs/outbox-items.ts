import type { Mrkdwn } from '../slack/mrkdwn.js';
import type { JobRecord, NewOutboxItem, PostKind, RunRecord } from '../store/types.js';

/** Emoji added to a follow-up once the agent accepted it. */
export const RECEIVED_REACTION = 'eyes';
/** Metadata event type of the bot's thread posts. */
export const POST_EVENT_TYPE = 'docs_agent_post';
/** Metadata event type of a job's root message. */
export const ROOT_EVENT_TYPE = 'docs_agent_root';

/** The metadata event types of everything the bot posts: its own messages carry one of them. */
export const BOT_EVENT_TYPES: ReadonlySet<string> = new Set([POST_EVENT_TYPE, ROOT_EVENT_TYPE]);

/** Metadata that lets a restarted bot find a root message it posted but did not record. */
export const rootMetadata = (jobId: number) => ({ eventType: ROOT_EVENT_TYPE, key: `root:${jobId}` });

/** A thread post about one run: its outcome, or a notice that it did not (surely) reach the agent. */
export function threadPost(
  job: JobRecord,
  key: string,
  text: Mrkdwn,
  kind: PostKind,
  run?: RunRecord,
  /** All the runs the post answers, when several merged into one result. */
  covers?: RunRecord[],
  blocks?: unknown[],
): NewOutboxItem {
  return {
    jobId: job.id,
    dedupeKey: `${key}:${job.id}`,
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
export function rootUpdate(job: JobRecord): NewOutboxItem[] {
  const ts = cardTsOf(job);
  return ts
    ? [{ jobId: job.id, dedupeKey: null, payload: { type: 'update_root', channel: job.channelId, ts } }]
    : [];
}

/**
 * The status card's ts. A command job's card is its root, also for jobs recorded by an earlier
 * version that did not record the card (during a rolling upgrade).
 */
export const cardTsOf = (job: JobRecord): string | null =>
  job.cardTs ?? (job.origin === 'command' ? job.threadTs : null);

export function receivedReaction(job: JobRecord, run: RunRecord): NewOutboxItem[] {
  return run.messageTs
    ? [
        {
          jobId: job.id,
          dedupeKey: `received:${run.id}`,
          payload: { type: 'reaction', channel: job.channelId, ts: run.messageTs, name: RECEIVED_REACTION },
        },
      ]
    : [];
}

/** Where to tell one person something privately. */
export interface PrivateTarget {
  channelId: string;
  userId: string;
  threadTs: string | null;
  /** A slash command's response_url, preferred while it is valid. */
  responseUrl: string | null;
}

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
