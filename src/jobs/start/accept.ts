import { THREAD_RELEASING_PHASES } from '../../domain/phases.js';
import type { JobPrivacy } from '../../domain/privacy.js';
import type { ChannelAudience } from '../../slack/directory.js';
import { isDirectMessage } from '../../slack/ids.js';
import { mrkdwnToPlain } from '../../slack/mrkdwn.js';
import { WHOLE_CONVERSATION } from '../../store/areas.js';
import type { JobOrigin, JobRecord } from '../../store/types.js';
import type { JobContext } from '../job-context.js';
import type { MentionOutcome, MentionRequest, ReplyRequest } from '../requests.js';
import { filesNote, withFiles } from '../thread-context.js';

/**
 * How much earlier than it was accepted a message counts as the last use of its assistant pane
 * thread, in milliseconds. The thread's row keeps Slack's latest event by its time and ignores an
 * older one; Slack delivers a late event again within minutes, so a channel change sent just
 * before the message but delivered after it is still recorded.
 */
export const PANE_USE_LAG_MS = 10 * 60_000;

/**
 * A channel job's privacy as the request says it. Slack is not asked here: its answer (up to a
 * lookup's time limit) would hold back the acknowledgement. `unknown` (treated as private) is
 * settled as the job starts, before anything shows it elsewhere (`jobs/job-privacy.ts`).
 */
export const channelPrivacy = (channelId: string, said?: ChannelAudience): JobPrivacy =>
  // A direct message's id says it all: `conversations.info` would call it private too.
  said ?? (isDirectMessage(channelId) ? 'private' : 'unknown');

/** A new job as the place it started from builds it: who, where, and what it asked. */
export type NewJob = Pick<JobRecord, 'channelId' | 'requesterId' | 'instruction' | 'triggerKey' | 'privacy'> &
  Partial<
    Pick<JobRecord, 'origin' | 'threadTs' | 'contextTs' | 'responseUrl' | 'contextChannelId' | 'projectId'>
  > & {
    teamId: string;
  };

/**
 * What recording a new job came to: the job (`created` false: its trigger key was recorded
 * before, a repeat), or `thread_taken` when its thread already has another job (nothing recorded).
 */
export type RecordedJob = { job: number; created: boolean } | 'thread_taken';

/** How a message (a mention, a direct message) starts a job in its thread. */
export interface MessageStart {
  origin: Extract<JobOrigin, 'mention' | 'direct'>;
  triggerKey: string;
  contextTs: string | null;
  /** Where it was asked, as far as the request says. */
  privacy: JobPrivacy;
  /** The channel the assistant pane was beside (checks and project), if any. */
  contextChannelId: string | null;
}

/** Recording a new job, whatever it started from: fast, before Slack is acknowledged. */
export interface JobRecording {
  /**
   * Records a new job and its first run: `prompt` is what the agent is given, `messageTs` the
   * message it came in (null: none), so the same message seen again as a reply is a repeat.
   */
  recordJob(job: NewJob, prompt: string, messageTs: string | null): Promise<RecordedJob>;
  /**
   * Records a message that starts a job in its thread (the message's own, or the one it was
   * posted in), or, where that thread already has a job, a follow-up to it. Undefined when it is
   * a repeat, or has no text.
   */
  recordMessage(request: MentionRequest, how: MessageStart): Promise<MentionOutcome>;
  /**
   * The assistant pane a direct message was written in: its thread's, else the conversation's
   * (agent messaging's Messages tab), with the channel Slack last reported it beside; its use is
   * recorded. Undefined: a plain direct message.
   */
  usePane(
    channelId: string,
    threadTs: string | undefined,
  ): Promise<{ contextChannelId: string | null } | undefined>;
}

export function createJobRecording(
  ctx: Pick<JobContext, 'store' | 'logger' | 'now' | 'instanceId' | 'projectFor' | 'settings' | 'enqueue'>,
  /** Records a reply in a job's thread: a mention in a thread that has a job is one. */
  acceptReply: (request: ReplyRequest) => Promise<number | undefined>,
): JobRecording {
  const { store, logger, now } = ctx;

  async function recordJob(fields: NewJob, prompt: string, messageTs: string | null): Promise<RecordedJob> {
    const { job, created } = await store.insertJob(
      {
        responseUrl: null,
        ...fields,
        // The channel whose project the job runs on (`CHANNEL_PROJECTS`): the pane's, else its own.
        projectId: fields.projectId ?? ctx.projectFor(fields.contextChannelId ?? fields.channelId),
        pollIntervalMs: ctx.settings.poll.intervalMs,
        owner: ctx.instanceId,
      },
      { kind: 'create', prompt, authorId: fields.requesterId, messageTs, owner: ctx.instanceId },
      now(),
    );
    return job.triggerKey === fields.triggerKey ? { job: job.id, created } : 'thread_taken';
  }

  async function recordMessage(request: MentionRequest, how: MessageStart): Promise<MentionOutcome> {
    const threadTs = request.threadTs ?? request.messageTs;
    const reply = async () => {
      const runId = await acceptReply({ ...request, threadTs });
      return runId === undefined ? undefined : { reply: runId };
    };
    const existing = request.threadTs && (await store.findJobByThread(request.channelId, request.threadTs));
    // A job that never ran (or that the agent forgot) gives the thread up; any other takes the message.
    if (existing && !THREAD_RELEASING_PHASES.has(existing.phase)) return reply();
    // Nothing to start a job with (the listener explains a bare mention).
    if (!request.text.trim()) return undefined;
    // Queued before the job is recorded (once per message): a crash in between cannot lose it.
    const note = filesNote(null, { ...request, threadTs }, request.files);
    if (note.length > 0) await ctx.enqueue(note, now());
    const result = await recordJob(
      {
        teamId: request.teamId,
        channelId: request.channelId,
        requesterId: request.userId,
        instruction: request.text.trim(),
        triggerKey: how.triggerKey,
        origin: how.origin,
        threadTs,
        contextTs: how.contextTs,
        privacy: how.privacy,
        contextChannelId: how.contextChannelId,
      },
      withFiles(mrkdwnToPlain(request.text).trim(), request.files ?? []),
      // The message is the first run's: the same message seen again as a reply is a repeat.
      request.messageTs,
    );
    // Someone started a job in this thread meanwhile: the message is a follow-up to it.
    if (result === 'thread_taken') return reply();
    if (result.created) return { job: result.job };
    logger.info('repeated message ignored', { jobId: result.job, origin: how.origin });
    return undefined;
  }

  async function usePane(channelId: string, threadTs: string | undefined) {
    // The assistant pane's thread, or agent messaging's Messages tab (its context is the
    // conversation's): either way a pane, beside the channel Slack last reported.
    const inThreadPane = threadTs ? await store.assistantThread(channelId, threadTs) : undefined;
    const paneTs = inThreadPane ? (threadTs ?? WHOLE_CONVERSATION) : WHOLE_CONVERSATION;
    const pane = inThreadPane ?? (await store.assistantThread(channelId, WHOLE_CONVERSATION));
    // In use: the retention sweep forgets only threads (and conversations) idle for RETENTION_DAYS.
    if (pane) await store.touchAssistantThread({ channelId, threadTs: paneTs }, now() - PANE_USE_LAG_MS);
    return pane;
  }

  return { recordJob, recordMessage, usePane };
}
