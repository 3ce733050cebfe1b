import { z } from 'zod';
import { SlackCallError } from '../../slack/caller.js';
import type { Blocks } from '../../slack/gateway.js';
import type { PostMetadata } from '../../slack/message-listing.js';
import { type Mrkdwn, recordedMrkdwn } from '../../slack/mrkdwn.js';
import type { JobRecord, NewOutboxItem, OutboxItem, RunRecord } from '../../store/types.js';
import { type ClaimCovers, ClaimLost, outboxKind, unkeyedPostKey } from '../outbox-kind.js';
import { createRescue } from '../rescue.js';

/** Metadata event type of the bot's thread posts. */
export const POST_EVENT_TYPE = 'docs_agent_post';

const about = z.looseObject({
  /** An outcome of a run, or a notice that an instruction did not (surely) reach the agent. */
  kind: z.enum(['outcome', 'notice']),
  /** The run's sequence number in its job. */
  run: z.number().nullable(),
  /** ts of the Slack message that carried the instruction, for follow-ups. */
  source: z.string().nullable(),
  /** When several runs merged into one result: their sequence numbers, comma-separated. */
  covers: z.string().optional(),
  /** …and their source message ts, comma-separated (empty for the first instruction). */
  sources: z.string().optional(),
});

/** A post in a job's thread about one of its runs. */
const threadPostPayload = z.looseObject({
  type: z.literal('post'),
  channel: z.string(),
  threadTs: z.string(),
  text: z.string(),
  /** Written into the message's metadata so a re-post after a crash can be detected. */
  eventType: z.string(),
  /** Which run the post is about, also written into the metadata (nothing secret). */
  about: about.optional(),
  /** Block Kit layout; `text` stays the notification and screen-reader fallback. */
  blocks: z.array(z.unknown()).optional(),
});

export type ThreadPostPayload = z.infer<typeof threadPostPayload>;
/** An outcome of a run, or a notice that an instruction did not (surely) reach the agent. */
export type PostKind = z.infer<typeof about>['kind'];

type JobKey = { jobId: number };
type RunKey = JobKey & { runId: number };

/**
 * The metadata of a thread post: its key, stable across restarts and naming the run (the outbox
 * id without one), and what it is about as the payload says, facts a later release added too.
 */
function postMetadata(item: OutboxItem<ThreadPostPayload>): PostMetadata {
  const { about } = item.payload;
  return {
    eventType: item.payload.eventType,
    key: item.dedupeKey ?? unkeyedPostKey(item.id),
    ...(about ? { fields: { ...about } as PostMetadata['fields'] } : {}),
  };
}

/** What a thread post says, and about which run. */
export interface ThreadPost {
  job: JobRecord;
  /** Its dedupe key, one of this kind's items: also the key in the message's metadata. */
  key: string;
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
export function threadPost({
  job,
  key,
  kind,
  text,
  run,
  covers,
  blocks,
}: ThreadPost): NewOutboxItem<ThreadPostPayload> {
  const payload: ThreadPostPayload = {
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
  };
  return { jobId: job.id, dedupeKey: key, payload };
}

/**
 * The bot's posts in a job's thread, each carrying {@link POST_EVENT_TYPE} metadata: not posted
 * twice (found again by their metadata after a crash), and rescued when Slack refuses one for good.
 */
export const threadPosts = outboxKind({
  payloads: [threadPostPayload],
  eventType: POST_EVENT_TYPE,
  items: {
    /** The outcome of a run (and of the follow-ups merged into it), by the run's sequence number. */
    outcome: ({ jobId, runSeq }: JobKey & { runSeq: number }) => `outcome:${runSeq}:${jobId}`,
    /** The create call failed: the job did not (surely) start. */
    startError: ({ jobId }: JobKey) => `start-error:${jobId}`,
    /** A restart came between the create call and its answer. */
    startUnknown: ({ jobId }: JobKey) => `start-unknown:${jobId}`,
    /** Polling is refused (the admin key), once per run count. */
    pollRefused: ({ jobId, runCount }: JobKey & { runCount: number }) => `poll-refused:${runCount}:${jobId}`,
    /** A batch of follow-ups failed to send, by the batch's first run. */
    followUpError: ({ jobId, runId }: RunKey) => `followup-error:${runId}:${jobId}`,
    /** A follow-up no message in the thread carried (a modal's), shown there with its author. */
    followUpShown: ({ jobId, runId }: RunKey) => `followup-shown:${runId}:${jobId}`,
    /** A restart came while a follow-up was being sent. */
    followUpUnknown: ({ jobId, runId }: RunKey) => `followup-unknown:${runId}:${jobId}`,
    /** The job's pull request (by its row in the store) was merged or closed: its requester told once. */
    pullRequestEnded: ({ jobId, pullRequestId }: JobKey & { pullRequestId: number }) =>
      `pull-request-ended:${pullRequestId}:${jobId}`,
    /** Someone pressed stop on the job's session: what was withdrawn, and what goes on. */
    stopped: ({ jobId, run, first }: JobKey & { run: number; first: number }) =>
      `stopped:${run}:${first}:${jobId}`,
  },
  sender: ({ slack, store, logger }) => ({
    /** Not posted twice: after an attempt that never recorded its answer, looked for first. */
    async send(item: OutboxItem<ThreadPostPayload>, claimCovers: ClaimCovers): Promise<undefined> {
      const { payload } = item;
      const metadata = postMetadata(item);
      // An earlier attempt started and never recorded its answer: Slack may already have the
      // message. Its metadata says so.
      if (item.attempts > 1) {
        const found = await slack
          .findPosted({ channel: payload.channel, threadTs: payload.threadTs, metadata })
          .catch((error: unknown) => {
            // Slack cannot say right now: ask again later rather than risk a second copy.
            // Only when it can never say (the app lacks the method or scope) post anyway.
            if (error instanceof SlackCallError && error.permanent) return undefined;
            throw error;
          });
        if (found) return;
        // The look may have used up the claim: renewed before the post, or not posted at all.
        if (!(await claimCovers())) throw new ClaimLost();
      }
      await slack.postMessage({
        channel: payload.channel,
        threadTs: payload.threadTs,
        text: recordedMrkdwn(payload.text),
        ...(payload.blocks ? { blocks: payload.blocks as Blocks } : {}),
        metadata,
      });
    },
    rescue: createRescue({ slack, store, logger }),
  }),
});
