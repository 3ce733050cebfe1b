import { cardTsOf } from '../../blocks/status-card.js';
import { cardUpdate } from '../../delivery/outbox-items.js';
import { triggerKeys } from '../../domain/keys.js';
import { enterPhase, expectPhase, mayRetry, RETRYABLE } from '../../domain/phases.js';
import { accessWhereAsked } from '../instruction-checks.js';
import type { JobContext } from '../job-context.js';
import type { RetryOutcome, RetryRequest } from '../requests.js';

/**
 * How long a click waits for the access check (users.info), in milliseconds: Slack wants its
 * answer within 3 seconds. Past it the person is told Slack could not say who they are.
 */
export const RETRY_ACCESS_CHECK_MS = 1_500;

/** Recording "Try again" on a failed job: fast, before Slack is acknowledged. */
export interface RetryAcceptance {
  /**
   * Records a new job in the failed job's thread, from its instruction and first prompt (with
   * the context it was given), requested by the person who clicked, who must be allowed to
   * instruct the agent where the job was asked (in the assistant pane, beside the channel
   * recorded with it). In the same write the old job moves to `retried` and gives up its thread,
   * and its card is queued for an update. It is then started like any job (access, hourly
   * limits, status card, create call).
   */
  acceptRetry(request: RetryRequest): Promise<RetryOutcome>;
}

export function createRetryAcceptance(
  ctx: Pick<JobContext, 'store' | 'access' | 'logger' | 'now' | 'instanceId' | 'settings' | 'loops'>,
): RetryAcceptance {
  const { store, logger, now } = ctx;
  return {
    async acceptRetry(request) {
      const triggerKey = triggerKeys.retry(request.jobId);
      // The click's value names a job; what it may do is read from the store, never the click.
      const old = await store.getJob(request.jobId);
      if (!old || old.channelId !== request.channelId) return 'not_retryable';
      // Only people who may instruct the agent here start a job with it.
      const allowed = await accessWhereAsked(ctx.access, old, request, RETRY_ACCESS_CHECK_MS);
      if (!allowed.allowed) return { refused: allowed };
      if (old.phase === 'retried') return 'repeat';
      const first = old.threadTs && mayRetry(old) ? (await store.getRuns(old.id))[0] : undefined;
      // Only a job whose card carries the button: one refused before its card was posted is not.
      if (!first || !old.threadTs || !cardTsOf(old)) return 'not_retryable';
      // Told before the old job is moved aside, so a person over a limit keeps the button.
      const room = await ctx.access.room(request.userId, old.projectId);
      if (!room.allowed) return { refused: room };
      const from = expectPhase(old.phase, RETRYABLE);
      const retried = { ...old, ...enterPhase(from, 'retried') };
      const result = await store.insertJob(
        {
          teamId: request.teamId,
          channelId: old.channelId,
          requesterId: request.userId,
          instruction: old.instruction,
          triggerKey,
          responseUrl: request.responseUrl,
          pollIntervalMs: ctx.settings.poll.intervalMs,
          owner: ctx.instanceId,
          origin: old.origin,
          // The job keeps the project it started on, the thread context it was given, and where
          // it was asked (the words are the same ones).
          projectId: old.projectId,
          threadTs: old.threadTs,
          contextTs: old.contextTs,
          privacy: old.privacy,
          contextChannelId: old.contextChannelId,
          replaces: { jobId: old.id, from, to: retried.phase, enqueue: cardUpdate(retried) },
        },
        {
          kind: 'create',
          prompt: first.prompt,
          authorId: request.userId,
          messageTs: null,
          owner: ctx.instanceId,
        },
        now(),
      );
      if (result.created) {
        // The old card's update was queued in the same write.
        ctx.loops.outbox.kick();
        logger.info('job tried again', { jobId: result.job.id, retriedJobId: old.id, user: request.userId });
        return { job: result.job.id };
      }
      if (result.job.triggerKey === triggerKey) {
        logger.info('repeated retry ignored', { jobId: result.job.id });
        return 'repeat';
      }
      // A follow-up started the job again, or it changed otherwise since it was read.
      return 'not_retryable';
    },
  };
}
