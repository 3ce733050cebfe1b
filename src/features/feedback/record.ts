import type { AccessDecision, AccessPolicy } from '../../access/access-policy.js';
import { accessWhereAsked } from '../../jobs/instruction-checks.js';
import type { JobService } from '../../jobs/job-service.js';
import type { MetricsHooks } from '../../jobs/metrics-hooks.js';
import type { Logger } from '../../logging/logger.js';
import { escapeMrkdwn } from '../../slack/mrkdwn.js';
import type { FeedbackVote } from '../../store/feedback.js';
import type { FeedbackStore, JobRecord, JobsStore, RunsStore } from '../../store/types.js';

/**
 * How long a press waits for the access check (users.info), in milliseconds: Slack wants its
 * answer within 3 seconds. Past it the press is not counted, as if Slack could not say who it was.
 */
export const FEEDBACK_ACCESS_CHECK_MS = 1_500;

/** A press of a feedback button under an outcome post, already parsed by its listener. */
export interface FeedbackRequest extends FeedbackVote {
  userId: string;
  /** The person's own workspace (`user.team_id`, else `team.id`); undefined when the press did not say. */
  teamId: string | undefined;
  /** Where the post is: the press must come from the job's own channel. */
  channelId: string;
}

/**
 * What became of a press: a new or changed vote, the same vote again, no such outcome, or a
 * press that does not count, with why (the person may not instruct the agent where the job was
 * asked).
 */
export type FeedbackOutcome =
  | 'recorded'
  | 'unchanged'
  | 'unknown'
  | { refused: AccessDecision & { allowed: false } };

/** What recording a vote works with: the outcome it reads, the vote it writes, who may vote, where it reports. */
export interface VoteDeps {
  store: Pick<JobsStore, 'getJob'> & Pick<RunsStore, 'getRuns'> & FeedbackStore;
  access: Pick<AccessPolicy, 'check'>;
  metrics: Pick<MetricsHooks, 'feedback'>;
  logger: Logger;
  /** When the vote is recorded (ms since the epoch). Default: `Date.now`. */
  now?: () => number;
}

/** What recording a reason works with besides: the job kernel, which records the follow-up. */
export interface ReasonDeps extends VoteDeps {
  jobs: Pick<JobService, 'acceptFollowUp'>;
}

/** The outcome a press or a reason is about, read back from the store, and whether its author may speak. */
async function outcomeChecked(
  deps: VoteDeps,
  request: Omit<FeedbackRequest, 'value'>,
): Promise<'unknown' | { refused: AccessDecision & { allowed: false } } | { job: JobRecord }> {
  const { store } = deps;
  const { jobId, runSeq, userId, channelId } = request;
  // The button's value names an outcome; that it is one is read from the store, never the click.
  const job = await store.getJob(jobId);
  if (!job || job.channelId !== channelId) return 'unknown';
  const run = (await store.getRuns(job.id)).find((r) => r.seq === runSeq);
  if (!run || run.outcome === null) return 'unknown';
  const decision = await accessWhereAsked(deps.access, job, request, FEEDBACK_ACCESS_CHECK_MS);
  if (!decision.allowed) {
    deps.logger.info('feedback not counted', { jobId, runSeq, user: userId, reason: decision.reason });
    return { refused: decision };
  }
  return { job };
}

/**
 * Records a person's vote on an outcome, once per person and outcome (a new press replaces it).
 * Only people who may instruct the agent where the job was asked vote (the rules of "Try again"
 * and stop: the installation's workspaces, the allow-lists, no guests unless allowed; the
 * hourly limits do not apply, a vote being no instruction); anyone else's press records nothing
 * and counts nothing.
 */
export async function recordVote(deps: VoteDeps, request: FeedbackRequest): Promise<FeedbackOutcome> {
  const { jobId, runSeq, value, userId } = request;
  const checked = await outcomeChecked(deps, request);
  if (checked === 'unknown' || 'refused' in checked) return checked;
  const changed = await deps.store.recordFeedback({ jobId, runSeq, value, userId }, (deps.now ?? Date.now)());
  if (!changed) return 'unchanged';
  deps.metrics.feedback(value);
  deps.logger.info('feedback recorded', { jobId, runSeq, value });
  return 'recorded';
}

/** What a thumbs-down said to fix, from its modal, already parsed by its listener. */
export interface ReasonRequest extends Omit<FeedbackRequest, 'value'> {
  /** What the person wrote, as typed (a modal's input is not Slack-encoded). */
  reason: string;
  /** The modal's view: a second delivery of the same submission is the same follow-up. */
  viewId: string;
}

/**
 * Records what to fix: kept with the person's thumbs-down on that outcome, and sent to the same
 * job as a follow-up from them, recorded like a reply in its thread (its batch, its hourly
 * limits, its length limit and access checked as a reply's are when it is processed). Returns
 * the follow-up's run to process, undefined for a repeat of the same submission.
 */
export async function recordReason(
  deps: ReasonDeps,
  request: ReasonRequest,
): Promise<Exclude<FeedbackOutcome, 'unchanged' | 'recorded'> | { runId: number | undefined }> {
  const { jobId, runSeq, userId, reason, viewId } = request;
  const checked = await outcomeChecked(deps, request);
  if (checked === 'unknown' || 'refused' in checked) return checked;
  const now = (deps.now ?? Date.now)();
  if (await deps.store.recordFeedbackReason({ jobId, runSeq, userId, reason }, now)) {
    deps.metrics.feedback('negative', true);
    deps.logger.info('feedback reason recorded', { jobId, runSeq });
  }
  const runId = await deps.jobs.acceptFollowUp({
    jobId: checked.job.id,
    source: { kind: 'modal', viewId },
    teamId: request.teamId,
    userId,
    // Recorded Slack-encoded, like every instruction, so one rule renders them all.
    text: escapeMrkdwn(reason),
  });
  return { runId };
}
