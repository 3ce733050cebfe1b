import type { FeedbackVote } from '../domain/feedback.js';
import type { JobContext } from './job-context.js';

/** A press of a feedback button under an outcome post, already parsed by its listener. */
export interface FeedbackRequest extends FeedbackVote {
  userId: string;
  /** Where the post is: the press must come from the job's own channel. */
  channelId: string;
}

/** What became of a press: a new or changed vote, the same vote again, or no such outcome. */
export type FeedbackOutcome = 'recorded' | 'unchanged' | 'unknown';

export interface OutcomeFeedback {
  /** Records a person's vote on an outcome, once per person and outcome (a new press replaces it). */
  acceptFeedback(request: FeedbackRequest): Promise<FeedbackOutcome>;
}

export function createOutcomeFeedback(
  ctx: Pick<JobContext, 'store' | 'metrics' | 'logger' | 'now'>,
): OutcomeFeedback {
  const { store } = ctx;
  return {
    async acceptFeedback({ jobId, runSeq, value, userId, channelId }) {
      // The button's value names an outcome; that it is one is read from the store, never the click.
      const job = await store.getJob(jobId);
      if (!job || job.channelId !== channelId) return 'unknown';
      const run = (await store.getRuns(job.id)).find((r) => r.seq === runSeq);
      if (!run || run.outcome === null) return 'unknown';
      const changed = await store.recordFeedback({ jobId, runSeq, value, userId }, ctx.now());
      if (!changed) return 'unchanged';
      ctx.metrics.feedback(value);
      ctx.logger.info('feedback recorded', { jobId, runSeq, value });
      return 'recorded';
    },
  };
}
