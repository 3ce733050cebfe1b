import { text } from '../blocks/messages.js';
import { THREAD_RELEASING_PHASES } from '../domain/phases.js';
import { mrkdwnToPlain } from '../slack/mrkdwn.js';
import type { FollowUps } from './follow-ups.js';
import type { InstructionChecks } from './instruction-checks.js';
import type { JobContext } from './job-context.js';
import type { ReplyRequest } from './requests.js';
import { filesNote, withFiles } from './shared-files.js';

/** Replies in a job's thread: recorded first, then checked and handed to the follow-up batches. */
export interface Replies {
  /** Records a reply in a job's thread. Returns the run's id, or undefined (no job, or a repeat). */
  acceptReply(request: ReplyRequest): Promise<number | undefined>;
  /** Checks access and sends a recorded reply to the agent (or explains why not). */
  processReply(runId: number, teamId?: string): Promise<void>;
}

export function createReplies(
  ctx: Pick<JobContext, 'store' | 'logger' | 'metrics' | 'now' | 'instanceId' | 'enqueue'>,
  parts: { checks: InstructionChecks; followUps: Pick<FollowUps, 'dispatchReady' | 'dropRun'> },
): Replies {
  const { store, logger, metrics, now } = ctx;
  const { checks } = parts;
  const { dispatchReady, dropRun } = parts.followUps;

  async function acceptReply(request: ReplyRequest): Promise<number | undefined> {
    const job = await store.findJobByThread(request.channelId, request.threadTs);
    if (!job || (request.mentionsBot && THREAD_RELEASING_PHASES.has(job.phase))) return undefined;
    // Queued before the reply is recorded (once per message): a crash in between cannot lose it.
    const note = filesNote(job.id, request, request.files);
    if (note.length > 0) await ctx.enqueue(note, now());
    const { run, created } = await store.insertFollowUp(
      job.id,
      {
        kind: 'follow_up',
        prompt: withFiles(mrkdwnToPlain(request.text).trim(), request.files ?? []),
        authorId: request.userId,
        messageTs: request.messageTs,
        owner: ctx.instanceId,
        teamId: request.teamId ?? null,
      },
      now(),
    );
    if (!created) logger.info('repeated reply ignored', { jobId: job.id, messageTs: request.messageTs });
    return created ? run.id : undefined;
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
      },
      now(),
    );
    if (readied) await dispatchReady(job.id);
  }

  return { acceptReply, processReply };
}
