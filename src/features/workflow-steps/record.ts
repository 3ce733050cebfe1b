import { threadHasJobText } from '../../blocks/refusal-texts.js';
import { stepWait } from '../../delivery/kinds/workflow-step.js';
import { triggerKeys } from '../../domain/keys.js';
import { recordCounted } from '../../http/not-recorded.js';
import type { OutboxWrites } from '../../jobs/job-context.js';
import type { MetricsHooks } from '../../jobs/metrics-hooks.js';
import { channelPrivacy, type JobRecording } from '../../jobs/start/accept.js';
import { stepFailure } from '../../jobs/workflow-steps.js';
import type { Logger } from '../../logging/logger.js';
import { WAIT_LIMIT_MS } from '../../slack/function-steps.js';
import { mrkdwnToPlain } from '../../slack/mrkdwn.js';

/** A Workflow Builder step "Start a docs agent job", its inputs already validated. */
export interface StepRequest {
  teamId: string;
  /** On whose behalf: every check is made for this person. */
  userId: string;
  /** Where the status card and the job's thread go. */
  channelId: string;
  /** A message of that channel to start the job's thread under; undefined: a new thread. */
  threadTs: string | undefined;
  /** The instruction as the workflow gave it (Slack-encoded, like a command's). */
  instruction: string;
  /** A documentation project the deployment serves; undefined: the channel's. */
  projectId: string | undefined;
  /** Slack's `function_execution_id`: unique per run of the step, so a repeat starts nothing. */
  executionId: string;
}

/** What a step's answers are queued with: the outbox writes, at this clock (default `Date.now`). */
export interface StepAnswerDeps {
  outbox: Pick<OutboxWrites, 'enqueue'>;
  now?: () => number;
}

/** What recording a step's job works with: the job kernel's recording, and what it reports. */
export interface StepRecordDeps extends StepAnswerDeps {
  jobs: Pick<JobRecording, 'recordJob'>;
  logger: Logger;
  metrics: Pick<MetricsHooks, 'instruction'>;
}

/**
 * Records a Workflow Builder step's job: the job (new, or the one the same execution recorded
 * before: Slack delivers an event again when its answer was lost), or `thread_taken` when the
 * message it was to reply under already has a job (nothing recorded; the step is failed).
 */
export function recordStep(
  deps: StepRecordDeps,
  request: StepRequest,
): Promise<{ job: number; created: boolean } | 'thread_taken'> {
  return recordCounted(deps.metrics, 'workflow', async () => {
    const recorded = await deps.jobs.recordJob(
      {
        teamId: request.teamId,
        channelId: request.channelId,
        requesterId: request.userId,
        instruction: request.instruction.trim(),
        triggerKey: triggerKeys.step(request.executionId),
        origin: 'workflow',
        threadTs: request.threadTs ?? null,
        privacy: channelPrivacy(request.channelId),
        ...(request.projectId ? { projectId: request.projectId } : {}),
      },
      mrkdwnToPlain(request.instruction).trim(),
      null,
    );
    if (recorded === 'thread_taken') {
      await deps.outbox.enqueue([stepFailure(request.executionId, null, threadHasJobText())], now(deps));
      return recorded;
    }
    if (!recorded.created) deps.logger.info('repeated workflow step ignored', { jobId: recorded.job });
    return recorded;
  });
}

/**
 * Fails a step that started nothing (its inputs are unusable), once per execution, with `text`:
 * plain text for the workflow's builder (`blocks/refusal-texts.ts`).
 */
export function refuseStep(deps: StepAnswerDeps, executionId: string, text: string): Promise<void> {
  return deps.outbox.enqueue([stepFailure(executionId, null, text)], now(deps));
}

/**
 * Records a "Wait for a docs agent job" step, answered by the outbox once the job's run ends,
 * or failed at its deadline: `WAIT_LIMIT_MS` from the step's start, `elapsedMs` before now.
 */
export function awaitStep(
  deps: StepAnswerDeps,
  executionId: string,
  jobId: number,
  elapsedMs = 0,
): Promise<void> {
  // Already past for a step Slack delivered late: the outbox answers it at once.
  const deadline = now(deps) - elapsedMs + WAIT_LIMIT_MS;
  return deps.outbox.enqueue([stepWait(executionId, jobId, deadline)], now(deps));
}

const now = (deps: StepAnswerDeps) => (deps.now ?? Date.now)();
