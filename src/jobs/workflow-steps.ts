import { type StepRefusal, stepRefusalText } from '../blocks/refusal-texts.js';
import type { Config } from '../config/config.js';
import { createStepSender, type StepSenderOptions, stepCompletion } from '../delivery/kinds/workflow-step.js';
import { stepExecutionOfKey } from '../domain/keys.js';
import type { Logger } from '../logging/logger.js';
import type { SlackCaller } from '../slack/caller.js';
import { createStepCompleter } from '../slack/function-steps.js';
import type { Identity } from '../slack/identity.js';
import type { JobRecord, NewOutboxItem } from '../store/types.js';
import { gated, type YieldGate } from '../util/yield-gate.js';

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
 * `error` is plain text (`blocks/refusal-texts.ts`): Slack shows it as it is in the workflow's
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

/**
 * The app's Workflow Builder answers: the completer (which keeps each execution's token, for the
 * listeners) and the outbox's sender, whose Slack calls wait for the requests in flight. A "Wait
 * for a docs agent job" step looks at its job as often as the poller polls it.
 */
export function createWorkflowSteps(options: {
  caller: SlackCaller;
  store: StepSenderOptions['store'];
  identity: Pick<Identity, 'get'>;
  logger: Logger;
  gate: YieldGate;
  config: { poll: Pick<Config['poll'], 'intervalMs'> } & Pick<Config, 'prLinkHosts'>;
}) {
  const completer = createStepCompleter(options.caller);
  const sender = createStepSender({
    store: options.store,
    steps: gated(completer, options.gate),
    workspaceUrl: async () => (await options.identity.get())?.url,
    logger: options.logger,
    checkEveryMs: options.config.poll.intervalMs,
    hints: { prLinkHosts: options.config.prLinkHosts },
    now: Date.now,
  });
  return { completer, sender };
}
