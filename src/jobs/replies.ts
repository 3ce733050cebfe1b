import type { RenderHints } from '../blocks/messages.js';
import { text } from '../blocks/messages.js';
import { threadPost } from '../delivery/kinds/thread-post.js';
import { keys } from '../delivery/outbox-registry.js';
import { type RunSource, runKeyOf } from '../domain/keys.js';
import { STILL_STARTING, TAKES_FOLLOW_UPS, THREAD_RELEASING_PHASES } from '../domain/phases.js';
import type { Logger } from '../logging/logger.js';
import type { SlackGateway } from '../slack/gateway.js';
import { followUpText, isHumanMessage } from '../slack/messages.js';
import { mrkdwnToPlain } from '../slack/mrkdwn.js';
import type { JobRecord, NewOutboxItem, RunRecord } from '../store/types.js';
import type { FollowUps } from './follow-ups.js';
import type { InstructionChecks } from './instruction-checks.js';
import type { JobContext } from './job-context.js';
import type { FollowUpRequest, ReplyRequest } from './requests.js';
import { CONTEXT_MESSAGES_READ, filesNote, withFiles } from './thread-context.js';

/**
 * Follow-ups to a job, replies in its thread or from any other source: recorded first, then
 * checked and handed to the follow-up batches.
 */
export interface Replies {
  /** Records a reply in a job's thread. Returns the run's id, or undefined (no job, or a repeat). */
  acceptReply(request: ReplyRequest): Promise<number | undefined>;
  /**
   * Records a follow-up to a job from a source that is no message in its thread (a modal, a
   * workflow step), keyed by that source, so the same submission delivered again is a repeat.
   * Returns the run's id, or undefined (no such job, or a repeat); {@link Replies.processReply}
   * then checks it and sends it in the job's next batch, as it does a reply.
   */
  acceptFollowUp(request: FollowUpRequest): Promise<number | undefined>;
  /** Checks access and sends a recorded follow-up to the agent (or explains why not). */
  processReply(runId: number, teamId?: string): Promise<void>;
}

export function createReplies(
  ctx: Pick<JobContext, 'store' | 'logger' | 'metrics' | 'now' | 'instanceId' | 'enqueue'>,
  parts: { checks: InstructionChecks; followUps: Pick<FollowUps, 'dispatchReady' | 'dropRun'> },
): Replies {
  const { store, logger, metrics, now } = ctx;
  const { checks } = parts;
  const { dispatchReady, dropRun } = parts.followUps;

  /** Records a follow-up to the job under the run key of its source; undefined for a repeat. */
  async function record(
    jobId: number,
    source: RunSource,
    by: { userId: string; teamId: string | undefined },
    prompt: string,
  ): Promise<number | undefined> {
    const { run, created } = await store.insertFollowUp(
      jobId,
      {
        kind: 'follow_up',
        prompt,
        authorId: by.userId,
        runKey: runKeyOf(source),
        // Only a message is reacted to once the agent has it, and named in the posts about it.
        messageTs: source.kind === 'message' ? source.ts : null,
        owner: ctx.instanceId,
        teamId: by.teamId ?? null,
      },
      now(),
    );
    if (created) return run.id;
    if (source.kind === 'message') logger.info('repeated reply ignored', { jobId, messageTs: source.ts });
    else logger.info('repeated follow-up ignored', { jobId, runKey: run.runKey });
    return undefined;
  }

  async function acceptReply(request: ReplyRequest): Promise<number | undefined> {
    const job = await store.findJobByThread(request.channelId, request.threadTs);
    if (!job || (request.mentionsBot && THREAD_RELEASING_PHASES.has(job.phase))) return undefined;
    // Queued before the reply is recorded (once per message): a crash in between cannot lose it.
    const note = filesNote(job.id, request, request.files);
    if (note.length > 0) await ctx.enqueue(note, now());
    const prompt = withFiles(mrkdwnToPlain(request.text).trim(), request.files ?? []);
    return record(job.id, { kind: 'message', ts: request.messageTs }, request, prompt);
  }

  async function acceptFollowUp(request: FollowUpRequest): Promise<number | undefined> {
    const job = await store.getJob(request.jobId);
    if (!job) return undefined;
    return record(job.id, request.source, request, mrkdwnToPlain(request.text).trim());
  }

  async function processReply(runId: number, teamId?: string): Promise<void> {
    const run = await store.getRun(runId);
    const job = run && (await store.getJob(run.jobId));
    if (!run || !job) return;
    // Checked before a restart: only its batch is left to send.
    if (run.state === 'ready') return dispatchReady(job.id);
    if (run.state !== 'pending') return;
    const to = {
      channelId: job.channelId,
      userId: run.authorId,
      threadTs: job.threadTs,
      responseUrl: null,
    };
    if (!run.prompt) {
      metrics.instruction('reply', 'refused', 'empty');
      return dropRun(job, run, 'empty', text.emptyFollowUp(), to);
    }
    let refused = await checks.refusal(
      run.id,
      run.prompt,
      {
        teamId: teamId ?? run.teamId ?? job.teamId,
        channelId: job.channelId,
        userId: run.authorId,
        contextChannelId: job.contextChannelId,
      },
      'reply',
    );
    if (refused === 'unverified') {
      const given = {
        kind: 'reply' as const,
        id: run.id,
        jobId: job.id,
        since: run.createdAt,
        to,
        recheck: () => processReply(run.id, teamId),
      };
      refused = await checks.waitOrGiveUp(given, 'reply');
      if (!refused) return;
    }
    if (refused) return dropRun(job, run, 'refused', refused.said, to);
    // Only while it still waits: its author may have deleted it (or edited it into an aside) meanwhile.
    const readied = await store.apply(
      {
        jobId: job.id,
        expectRun: { id: run.id, states: ['pending'] },
        run: { id: run.id, patch: { state: 'ready' } },
        // A follow-up no message in the thread carried is shown there once it is taken, in the
        // same write, so the thread shows what the agent was told and by whom, exactly once.
        ...(run.messageTs === null && showsFollowUps(job) ? { enqueue: [followUpShown(job, run)] } : {}),
      },
      now(),
    );
    if (readied) await dispatchReady(job.id);
  }

  return { acceptReply, acceptFollowUp, processReply };
}

/**
 * Whether a follow-up no message carried is shown in the job's thread once taken: only while the
 * job has its thread and takes follow-ups (or is still starting). A follow-up to any other job is
 * refused when its batch is sent, privately, as a reply there would be, and nothing of it is shown.
 */
const showsFollowUps = (job: JobRecord): boolean =>
  job.threadTs !== null && (TAKES_FOLLOW_UPS.has(job.phase) || STILL_STARTING.has(job.phase));

/** The thread post showing a follow-up that no message in the thread carried. */
function followUpShown(job: JobRecord, run: RunRecord): NewOutboxItem {
  return threadPost({
    job,
    key: keys.followUpShown({ jobId: job.id, runId: run.id }),
    kind: 'notice',
    text: text.followUpShown(run.authorId, run.prompt),
    run,
  });
}

/**
 * Replies posted in a mention's thread before its job was recorded were seen as replies in a
 * thread with no job (Slack may deliver a mention late, after a retry). Once the job exists,
 * they are read back from the thread and recorded as follow-ups; the store recognizes any it
 * already has by their run key, a message's ts.
 */
export function createReplyCatchUp(deps: {
  slack: SlackGateway;
  logger: Logger;
  hints: RenderHints;
  botUserId: () => Promise<string | undefined>;
  accept: (request: ReplyRequest) => Promise<number | undefined>;
  process: (runId: number, teamId: string | undefined) => Promise<void>;
}) {
  /** Records the human replies in the job's thread posted after `afterTs` and before `beforeTs`. */
  return async function catchUp(job: JobRecord, afterTs: string, beforeTs: string): Promise<void> {
    if (!job.threadTs) return;
    try {
      const botUserId = await deps.botUserId();
      const messages = await deps.slack.threadMessages({
        channel: job.channelId,
        threadTs: job.threadTs,
        limit: CONTEXT_MESSAGES_READ,
        oldest: afterTs,
        latest: beforeTs,
      });
      for (const m of messages) {
        if (Number(m.ts) <= Number(afterTs) || Number(m.ts) >= Number(beforeTs)) continue;
        // The same rule as a reply arriving live: joins, topic changes and the like are no replies.
        if (!m.user || m.botId || m.eventType || m.user === botUserId || !isHumanMessage(m)) continue;
        const text = followUpText(m.text, { botUserId, ...deps.hints });
        if (text === undefined) continue;
        const runId = await deps.accept({
          teamId: m.team ?? job.teamId,
          channelId: job.channelId,
          threadTs: job.threadTs,
          messageTs: m.ts,
          userId: m.user,
          text,
        });
        if (runId !== undefined) {
          deps.logger.info('reply posted before its job was recorded taken as a follow-up', {
            jobId: job.id,
          });
          await deps.process(runId, m.team);
        }
      }
    } catch (error) {
      deps.logger.warn('could not read the thread for replies posted before the job', {
        jobId: job.id,
        error,
      });
    }
  };
}
