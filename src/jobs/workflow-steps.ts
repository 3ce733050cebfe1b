import { type StepRefusal, stepRefusalText } from '../blocks/step-texts.js';
import { stepCompletion } from '../delivery/kinds/workflow-step.js';
import { stepExecutionOfKey } from '../domain/keys.js';
import type { JobRecord, NewOutboxItem } from '../store/types.js';

/*
 * A job started by a Workflow Builder step ("Start a docs agent job") answers the step once its
 * start is settled: the job exists upstream, or it was refused or failed. The answer is an outbox
 * item queued in the same write as the job's phase change, so it is sent exactly once, after a
 * restart too, and never before the job's fate is recorded.
 */

/** The step execution that started a job, if a step did. */
export function stepExecutionOf(job: Pick<JobRecord, 'origin' | 'triggerKey'>): string | undefined {
  return job.origin === 'workflow' ? stepExecutionOfKey(job.triggerKey) : undefined;
}

/**
 * A step's failure, once per execution: for a job it started, or for one it could not record.
 * `error` is plain text (`blocks/step-texts.ts`): Slack shows it as it is in the workflow's
 * activity, to the workflow's builder.
 */
export function stepFailure(executionId: string, jobId: number | null, error: string): NewOutboxItem {
  return stepCompletion(executionId, jobId, { error: error.trim() });
}

/**
 * The step's answer, for a job a step started (nothing otherwise): success once the agent has
 * the job (`threadTs`: its thread), or failure saying why, in words for the workflow's builder
 * (the job's requester is told in the chat's own words, by the caller).
 */
export function stepAnswer(
  job: Pick<JobRecord, 'id' | 'origin' | 'triggerKey' | 'channelId' | 'requesterId'>,
  outcome: { threadTs: string } | { refused: StepRefusal },
): NewOutboxItem[] {
  const executionId = stepExecutionOf(job);
  if (executionId === undefined) return [];
  if ('refused' in outcome) {
    const subject = { userId: job.requesterId, channelId: job.channelId };
    return [stepFailure(executionId, job.id, stepRefusalText(outcome.refused, subject))];
  }
  return [
    stepCompletion(executionId, job.id, { job: job.id, channel: job.channelId, threadTs: outcome.threadTs }),
  ];
}
