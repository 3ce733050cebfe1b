import { THREAD_RELEASING_PHASES } from '../../domain/phases.js';
import { mrkdwnToPlain } from '../../slack/mrkdwn.js';
import type { JobRecord } from '../../store/types.js';
import type { JobContext } from '../job-context.js';
import type {
  MentionOutcome,
  MentionRequest,
  ReplyRequest,
  ShortcutRequest,
  StartRequest,
} from '../requests.js';
import { filesNote, withFiles } from '../shared-files.js';
import { withContext } from '../thread-context.js';

/** Recording a new job from each place one starts: fast, before Slack is acknowledged. */
export interface JobAcceptance {
  /** Records a command. Returns the new job's id, or undefined when it is a repeat. */
  acceptCommand(request: StartRequest): Promise<number | undefined>;
  /**
   * Records a mention: a new job in its thread, or, where the thread already has a job, a
   * follow-up to it. Undefined when it is a repeat.
   */
  acceptMention(request: MentionRequest): Promise<MentionOutcome>;
  /**
   * Records a shortcut submission: the new job's id; `repeat` for the same submission again;
   * `thread_taken` when the message's thread already has a job (nothing recorded).
   */
  acceptShortcut(request: ShortcutRequest): Promise<{ job: number } | 'repeat' | 'thread_taken'>;
}

export function createJobAcceptance(
  ctx: Pick<JobContext, 'store' | 'logger' | 'now' | 'instanceId' | 'projectFor' | 'settings' | 'enqueue'>,
  /** Records a reply in a job's thread: a mention in a thread that has a job is one. */
  acceptReply: (request: ReplyRequest) => Promise<number | undefined>,
): JobAcceptance {
  const { store, logger, now } = ctx;

  /** Records a new job and its first run. */
  const insert = (
    fields: Pick<JobRecord, 'channelId' | 'requesterId' | 'instruction' | 'triggerKey'> &
      Partial<Pick<JobRecord, 'origin' | 'threadTs' | 'contextTs' | 'responseUrl'>> & { teamId: string },
    prompt: string,
    messageTs: string | null,
  ) =>
    store.insertJob(
      {
        responseUrl: null,
        ...fields,
        projectId: ctx.projectFor(fields.channelId),
        pollIntervalMs: ctx.settings.poll.intervalMs,
        owner: ctx.instanceId,
      },
      { kind: 'create', prompt, authorId: fields.requesterId, messageTs, owner: ctx.instanceId },
      now(),
    );

  return {
    async acceptCommand(request) {
      const { job, created } = await insert(
        {
          teamId: request.teamId,
          channelId: request.channelId,
          requesterId: request.userId,
          instruction: request.text.trim(),
          triggerKey: `command:${request.triggerId}`,
          responseUrl: request.responseUrl,
        },
        mrkdwnToPlain(request.text).trim(),
        null,
      );
      if (!created) logger.info('repeated command ignored', { jobId: job.id });
      return created ? job.id : undefined;
    },

    async acceptMention(request) {
      const reply = async () => {
        const runId = await acceptReply({
          ...request,
          threadTs: request.threadTs ?? request.messageTs,
        });
        return runId === undefined ? undefined : { reply: runId };
      };
      const existing = request.threadTs && (await store.findJobByThread(request.channelId, request.threadTs));
      // A job that never ran (or that the agent forgot) gives the thread up; any other takes the mention.
      if (existing && !THREAD_RELEASING_PHASES.has(existing.phase)) return reply();
      // Nothing to start a job with (the listener explains a bare mention).
      if (!request.text.trim()) return undefined;
      const triggerKey = `mention:${request.channelId}:${request.messageTs}`;
      // Queued before the job is recorded (once per message): a crash in between cannot lose it.
      const where = { ...request, threadTs: request.threadTs ?? request.messageTs };
      const note = filesNote(null, where, request.files);
      if (note.length > 0) await ctx.enqueue(note, now());
      const result = await insert(
        {
          teamId: request.teamId,
          channelId: request.channelId,
          requesterId: request.userId,
          instruction: request.text.trim(),
          triggerKey,
          origin: 'mention',
          // The mention's own message becomes the thread, or the thread it was posted in.
          threadTs: request.threadTs ?? request.messageTs,
          contextTs: request.threadTs ? request.messageTs : null,
        },
        withFiles(mrkdwnToPlain(request.text).trim(), request.files ?? []),
        // The mention is the first run's message: the same message seen again as a reply is a repeat.
        request.messageTs,
      );
      if (result.created) return { job: result.job.id };
      // Someone started a job in this thread meanwhile: the mention is a follow-up to it.
      if (result.job.triggerKey !== triggerKey) return reply();
      logger.info('repeated mention ignored', { jobId: result.job.id });
      return undefined;
    },

    async acceptShortcut(request) {
      const { message } = request;
      const inPlace = request.channelId === message.channelId;
      const lines = message.text.trim()
        ? [{ author: message.author, text: mrkdwnToPlain(message.text).trim() }]
        : [];
      const prompt = withFiles(
        withContext(
          mrkdwnToPlain(request.instruction).trim(),
          lines,
          // The message is what the user chose to send (at most 3,000 characters in the modal).
          Math.max(ctx.settings.threadContextMaxChars, 3_000),
          request.permalink ? { link: request.permalink } : {},
        ),
        message.files ?? [],
      );
      const triggerKey = `shortcut:${request.viewId}`;
      // In the message's own channel the job lives in its thread; elsewhere it gets a new one.
      const threadTs = inPlace ? (message.threadTs ?? message.ts) : null;
      const result = await insert(
        {
          teamId: request.teamId,
          channelId: request.channelId,
          requesterId: request.userId,
          instruction: request.instruction.trim(),
          triggerKey,
          origin: 'shortcut',
          threadTs,
        },
        prompt,
        null,
      );
      if (result.created) return { job: result.job.id };
      return result.job.triggerKey === triggerKey ? 'repeat' : 'thread_taken';
    },
  };
}
