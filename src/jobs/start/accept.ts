import { threadHasJobText } from '../../blocks/refusal-texts.js';
import { stepWait } from '../../delivery/kinds/workflow-step.js';
import { triggerKeys } from '../../domain/keys.js';
import { THREAD_RELEASING_PHASES } from '../../domain/phases.js';
import type { ChannelAudience } from '../../slack/channel-audience.js';
import { WAIT_LIMIT_MS } from '../../slack/function-steps.js';
import { isDirectMessage } from '../../slack/ids.js';
import { mrkdwnToPlain } from '../../slack/mrkdwn.js';
import { WHOLE_CONVERSATION } from '../../store/assistant-threads.js';
import type { JobPrivacy, JobRecord } from '../../store/types.js';
import type { JobContext } from '../job-context.js';
import type {
  DirectRequest,
  MentionOutcome,
  MentionRequest,
  ReplyRequest,
  ShortcutRequest,
  StartRequest,
  StepRequest,
} from '../requests.js';
import { filesNote, withFiles } from '../shared-files.js';
import { withContext } from '../thread-context.js';
import { stepFailure } from '../workflow-steps.js';

/**
 * How much earlier than it was accepted a message counts as the last use of its assistant pane
 * thread, in milliseconds. The thread's row keeps Slack's latest event by its time and ignores an
 * older one; Slack delivers a late event again within minutes, so a channel change sent just
 * before the message but delivered after it is still recorded.
 */
export const PANE_USE_LAG_MS = 10 * 60_000;

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
   * Records a direct message to the bot the same way: a new job whose thread is the message (or
   * the thread it was posted in, such as the assistant pane's), or a follow-up where that thread
   * has a job. In the assistant pane opened beside a channel, that channel is recorded with the
   * job: it runs on that channel's project and is checked against that channel, wherever the
   * pane is by then. Undefined when it is a repeat, or has no text.
   */
  acceptDirect(request: DirectRequest): Promise<MentionOutcome>;
  /**
   * Records a shortcut submission: the new job's id; `repeat` for the same submission again;
   * `thread_taken` when the message's thread already has a job (nothing recorded).
   */
  acceptShortcut(request: ShortcutRequest): Promise<{ job: number } | 'repeat' | 'thread_taken'>;
  /**
   * Records a Workflow Builder step's job: the job (new, or the one the same execution recorded
   * before: Slack delivers an event again when its answer was lost), or `thread_taken` when the
   * message it was to reply under already has a job (nothing recorded; the step is failed).
   */
  acceptStep(request: StepRequest): Promise<{ job: number; created: boolean } | 'thread_taken'>;
  /**
   * Fails a step that started nothing (its inputs are unusable), once per execution, with `text`:
   * plain text for the workflow's builder (`blocks/refusal-texts.ts`).
   */
  refuseStep(executionId: string, text: string): Promise<void>;
  /**
   * Records a "Wait for a docs agent job" step, answered by the outbox once the job's run ends,
   * or failed at its deadline: `WAIT_LIMIT_MS` from the step's start, `elapsedMs` before now.
   */
  awaitStep(executionId: string, jobId: number, elapsedMs?: number): Promise<void>;
}

export function createJobAcceptance(
  ctx: Pick<JobContext, 'store' | 'logger' | 'now' | 'instanceId' | 'projectFor' | 'settings' | 'enqueue'>,
  /** Records a reply in a job's thread: a mention in a thread that has a job is one. */
  acceptReply: (request: ReplyRequest) => Promise<number | undefined>,
): JobAcceptance {
  const { store, logger, now } = ctx;

  /**
   * A channel job's privacy as the request says it. Slack is not asked here: its answer (up to a
   * lookup's time limit) would hold back the acknowledgement. `unknown` (treated as private) is
   * settled as the job starts, before anything shows it elsewhere (`jobs/job-privacy.ts`).
   */
  const channelPrivacy = (channelId: string, said?: ChannelAudience): JobPrivacy =>
    // A direct message's id says it all: `conversations.info` would call it private too.
    said ?? (isDirectMessage(channelId) ? 'private' : 'unknown');

  /** Records a new job and its first run. */
  const insert = (
    fields: Pick<JobRecord, 'channelId' | 'requesterId' | 'instruction' | 'triggerKey' | 'privacy'> &
      Partial<
        Pick<
          JobRecord,
          'origin' | 'threadTs' | 'contextTs' | 'responseUrl' | 'contextChannelId' | 'projectId'
        >
      > & {
        teamId: string;
      },
    prompt: string,
    messageTs: string | null,
  ) =>
    store.insertJob(
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

  /**
   * A message that starts a job in its thread (the message's own, or the one it was posted in),
   * or, where that thread has a job, is a follow-up to it.
   */
  async function inThread(
    request: MentionRequest,
    how: {
      origin: 'mention' | 'direct';
      triggerKey: string;
      contextTs: string | null;
      /** Where it was asked, as far as the request says. */
      privacy: JobPrivacy;
      /** The channel the assistant pane was beside (checks and project), if any. */
      contextChannelId: string | null;
    },
  ): Promise<MentionOutcome> {
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
    const result = await insert(
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
    if (result.created) return { job: result.job.id };
    // Someone started a job in this thread meanwhile: the message is a follow-up to it.
    if (result.job.triggerKey !== how.triggerKey) return reply();
    logger.info('repeated message ignored', { jobId: result.job.id, origin: how.origin });
    return undefined;
  }

  return {
    async acceptCommand(request) {
      const { job, created } = await insert(
        {
          teamId: request.teamId,
          channelId: request.channelId,
          requesterId: request.userId,
          instruction: request.text.trim(),
          triggerKey: triggerKeys.command(request.triggerId),
          responseUrl: request.responseUrl,
          privacy: channelPrivacy(request.channelId, request.audience),
        },
        mrkdwnToPlain(request.text).trim(),
        null,
      );
      if (!created) logger.info('repeated command ignored', { jobId: job.id });
      return created ? job.id : undefined;
    },

    acceptMention: (request) =>
      inThread(request, {
        origin: 'mention',
        triggerKey: triggerKeys.mention(request.channelId, request.messageTs),
        // The earlier messages of the thread it was posted in are the job's context.
        contextTs: request.threadTs ? request.messageTs : null,
        privacy: channelPrivacy(request.channelId),
        contextChannelId: null,
      }),

    async acceptDirect(request) {
      // The assistant pane's thread, or agent messaging's Messages tab (its context is the
      // conversation's): either way a pane, beside the channel Slack last reported.
      const inThreadPane = request.threadTs
        ? await store.assistantThread(request.channelId, request.threadTs)
        : undefined;
      const threadTs = inThreadPane ? (request.threadTs ?? WHOLE_CONVERSATION) : WHOLE_CONVERSATION;
      const pane = inThreadPane ?? (await store.assistantThread(request.channelId, WHOLE_CONVERSATION));
      // In use: the retention sweep forgets only threads (and conversations) idle for RETENTION_DAYS.
      if (pane)
        await store.touchAssistantThread({ channelId: request.channelId, threadTs }, now() - PANE_USE_LAG_MS);
      return inThread(request, {
        origin: 'direct',
        triggerKey: triggerKeys.direct(request.channelId, request.messageTs),
        // A conversation with the bot itself: nothing in it is context someone else gave.
        contextTs: null,
        privacy: pane ? 'pane' : 'direct',
        // The assistant pane opened beside a channel works for that channel, as it is now.
        contextChannelId: pane?.contextChannelId ?? null,
      });
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
      const triggerKey = triggerKeys.shortcut(request.viewId);
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
          privacy: channelPrivacy(request.channelId, request.audience),
        },
        prompt,
        null,
      );
      if (result.created) return { job: result.job.id };
      return result.job.triggerKey === triggerKey ? 'repeat' : 'thread_taken';
    },

    async acceptStep(request) {
      const triggerKey = triggerKeys.step(request.executionId);
      const { job, created } = await insert(
        {
          teamId: request.teamId,
          channelId: request.channelId,
          requesterId: request.userId,
          instruction: request.instruction.trim(),
          triggerKey,
          origin: 'workflow',
          threadTs: request.threadTs ?? null,
          privacy: channelPrivacy(request.channelId),
          ...(request.projectId ? { projectId: request.projectId } : {}),
        },
        mrkdwnToPlain(request.instruction).trim(),
        null,
      );
      if (job.triggerKey !== triggerKey) {
        await ctx.enqueue([stepFailure(request.executionId, null, threadHasJobText())], now());
        return 'thread_taken';
      }
      if (!created) logger.info('repeated workflow step ignored', { jobId: job.id });
      return { job: job.id, created };
    },

    refuseStep: (executionId, text) => ctx.enqueue([stepFailure(executionId, null, text)], now()),

    awaitStep(executionId, jobId, elapsedMs = 0) {
      // Already past for a step Slack delivered late: the outbox answers it at once.
      const deadline = now() - elapsedMs + WAIT_LIMIT_MS;
      return ctx.enqueue([stepWait(executionId, jobId, deadline)], now());
    },
  };
}
