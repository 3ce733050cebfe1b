import { z } from 'zod';
import type { RenderHints } from '../../blocks/messages.js';
import { waitText } from '../../blocks/refusal-texts.js';
import { NO_WAY_ON } from '../../domain/phases.js';
import { isPublicJob } from '../../domain/privacy.js';
import type { Logger } from '../../logging/logger.js';
import {
  isAnswerRefused,
  isExecutionClosed,
  type StepCompleter,
  type StepResult,
  WAIT_LIMIT_MS,
} from '../../slack/function-steps.js';
import { checkPullRequestUrl, checkUrl, permalink, type SafeUrl } from '../../slack/links.js';
import { escapeMrkdwn, type Mrkdwn, md } from '../../slack/mrkdwn.js';
import type { JobRecord, JobsStore, NewOutboxItem, OutboxItem } from '../../store/types.js';
import { type Delivery, outboxKind } from '../outbox-kind.js';

/**
 * A Workflow Builder step's answer (`functions.completeSuccess` or `completeError`): the job the
 * step started, or why it did not start.
 */
const completeStepPayload = z.looseObject({
  type: z.literal('complete_step'),
  /** Slack's `function_execution_id`. */
  executionId: z.string(),
  result: z.union([
    z.object({ job: z.number(), channel: z.string(), threadTs: z.string() }),
    z.object({ error: z.string() }),
  ]),
});

/**
 * A "Wait for a docs agent job" step: answered once the job's latest run has ended, or failed
 * at `deadline` (epoch ms), before Slack's own limit ends the step.
 */
const awaitJobPayload = z.looseObject({
  type: z.literal('await_job'),
  executionId: z.string(),
  job: z.number(),
  deadline: z.number(),
});

export type StepCompletion = z.infer<typeof completeStepPayload>;
export type StepWait = z.infer<typeof awaitJobPayload>;

/** A step's answer, once per step execution: the job it started, or why it did not start. */
export function stepCompletion(
  executionId: string,
  jobId: number | null,
  result: StepCompletion['result'],
): NewOutboxItem<StepCompletion> {
  return {
    jobId,
    dedupeKey: workflowSteps.items.stepCompleted({ executionId }),
    payload: { type: 'complete_step', executionId, result },
  };
}

/** A "Wait for a docs agent job" step on the job `job`, failed at `deadline` if still running. */
export function stepWait(executionId: string, job: number, deadline: number): NewOutboxItem<StepWait> {
  return {
    jobId: null,
    dedupeKey: workflowSteps.items.stepWait({ executionId }),
    payload: { type: 'await_job', executionId, job, deadline },
  };
}

export interface StepSenderOptions {
  store: Pick<JobsStore, 'getJob'>;
  steps: Pick<StepCompleter, 'complete'>;
  /** The workspace's address (auth.test's `url`), for thread links; undefined when Slack cannot say. */
  workspaceUrl: () => Promise<string | undefined>;
  logger: Logger;
  /** How often a "Wait for a docs agent job" step looks at its job again, in milliseconds. */
  checkEveryMs: number;
  /** Which pull request addresses may be passed on, as the thread's links (`PR_LINK_HOSTS`). */
  hints: Pick<RenderHints, 'prLinkHosts'>;
  now: () => number;
}

/**
 * Delivers the outbox's Workflow Builder items: a "Start a docs agent job" step's answer, and a
 * "Wait for a docs agent job" step, which looks at its job until the job's run ends or the step's
 * time is up. The outputs are named and typed as the manifest's `output_parameters`, and hold
 * only what a post may show (`waitOutputs` below). Slack refusing an answer for good gives
 * the item up, logged once.
 */
export function createStepSender(options: StepSenderOptions) {
  const { store, steps, logger, now } = options;

  /** The thread's address, when it is one a post would link. */
  const threadLink = async (channel: string, threadTs: string | null) =>
    threadTs ? checkUrl(permalink(await options.workspaceUrl(), channel, threadTs)) : undefined;

  async function startResult(payload: StepCompletion): Promise<StepResult> {
    const { result } = payload;
    if ('error' in result) return { error: result.error };
    const link = await threadLink(result.channel, result.threadTs);
    return {
      outputs: {
        job_id: result.job,
        channel_id: result.channel,
        thread_ts: result.threadTs,
        ...(link ? { thread_link: link } : {}),
      },
    };
  }

  /** The wait's answer once the job's run has ended, or undefined while it is still going. */
  async function waitResult(job: JobRecord | undefined, payload: StepWait): Promise<StepResult | undefined> {
    // Only jobs a step started, whose id the workflow was given: never any job by its number.
    if (job?.origin !== 'workflow') return { error: waitText.noSuchJob() };
    const link = await threadLink(job.channelId, job.threadTs);
    if (NO_WAY_ON.has(job.phase) && job.lastOutcome === null) return { error: waitText.neverStarted(link) };
    if (job.phase === 'idle' || NO_WAY_ON.has(job.phase))
      return { outputs: waitOutputs(job, link, options.hints) };
    if (now() < payload.deadline) return undefined;
    return { error: waitText.stillRunning(Math.round(WAIT_LIMIT_MS / 60_000), link) };
  }

  return {
    async send(item: OutboxItem<StepCompletion | StepWait>): Promise<Delivery> {
      const { payload } = item;
      let result: StepResult | undefined;
      if (payload.type === 'complete_step') result = await startResult(payload);
      else {
        result = await waitResult(await store.getJob(payload.job), payload);
        if (!result) return { laterAt: Math.min(now() + options.checkEveryMs, payload.deadline) };
      }
      try {
        await steps.complete(payload.executionId, result, now());
      } catch (error) {
        if (isAnswerRefused(error)) {
          // Given up at once: retrying until the execution closes would only repeat the refusal.
          logger.warn('Slack refused a workflow step’s answer for good; it is given up', {
            outboxId: item.id,
            jobId: item.jobId,
            executionId: payload.executionId,
            code: error.code,
          });
          return error.code;
        }
        if (!isExecutionClosed(error)) throw error;
        // An earlier attempt whose answer was lost may have completed it; otherwise Slack ended
        // the step first (its time limit): nothing is left to answer either way.
        if (item.attempts > 1) return undefined;
        logger.warn('a workflow step ended before it was answered', { outboxId: item.id, jobId: item.jobId });
        return 'execution_closed';
      }
      return undefined;
    },
  };
}

/**
 * Sends the Workflow Builder items; built with the step completer by `createWorkflowSteps`
 * (`jobs/workflow-steps.ts`).
 */
export type StepSender = ReturnType<typeof createStepSender>;

/**
 * The answers to Workflow Builder steps, once per step execution (Slack's `function_execution_id`),
 * sent by the step sender the composition root builds; without one they are given up.
 */
export const workflowSteps = outboxKind({
  payloads: [completeStepPayload, awaitJobPayload],
  items: {
    /** A "Start a docs agent job" step's answer. */
    stepCompleted: ({ executionId }: { executionId: string }) => `step:${executionId}`,
    /** A "Wait for a docs agent job" step, answered once its job's run ends. */
    stepWait: ({ executionId }: { executionId: string }) => `step-wait:${executionId}`,
  },
  sender: ({ steps }) => ({
    send: async (item) => (steps ? steps.send(item) : 'no_workflow_steps'),
  }),
});

/**
 * The outputs of a "Wait for a docs agent job" step, named and typed as the manifest's
 * `output_parameters`. A workflow hands them to its next steps ("Send a message" shows them as
 * they are), so they keep the promises of a post: text is mrkdwn escaped as in a message, and an
 * address is one the thread would show as a link.
 */
export type WaitOutputs = {
  job_id: number;
  /** The run's outcome (`completed_pr`…), for a workflow's branches. */
  status: Mrkdwn;
  /** What happened, in a sentence: says when the pull request's link was withheld. */
  summary: Mrkdwn;
  thread_link?: SafeUrl;
  pull_request_link?: SafeUrl;
};

/** What becomes of the job's pull request address in the outputs. */
type PullRequest = { link: SafeUrl } | 'none' | 'private' | 'withheld';

function pullRequestOf(job: JobRecord, hints: Pick<RenderHints, 'prLinkHosts'>): PullRequest {
  if (!job.prLink) return 'none';
  // What a workflow passes on may reach people who cannot read the job's channel.
  if (!isPublicJob(job)) return 'private';
  // The thread's own rule: https, on PR_LINK_HOSTS, a pull request's path, no Slack syntax.
  const link = checkPullRequestUrl(job.prLink, hints.prLinkHosts);
  return link ? { link } : 'withheld';
}

function outcomeSentence(status: string): Mrkdwn {
  switch (status) {
    case 'completed_pr':
      return md`The docs agent finished and opened a pull request.`;
    case 'completed_no_changes':
      return md`The docs agent finished without changing any files, so no pull request was opened.`;
    case 'failed':
      return md`The docs agent job failed; the agent API does not say why.`;
    case 'archived':
      return md`The docs agent job was archived, so it will not continue.`;
    case 'gone':
      return md`The agent API no longer knows the docs agent job.`;
    case 'stopped_watching':
      return md`The docs agent stopped watching the job: it was still running after its time limit.`;
    default:
      return md`The docs agent job's run ended.`;
  }
}

const PULL_REQUEST_NOTES: Record<'private' | 'withheld', Mrkdwn> = {
  private: md` Its pull request link is not passed on, because the job's channel is not public: the job's thread has it.`,
  withheld: md` Its pull request link was withheld: the address is not a pull request on a host this docs agent trusts (PR_LINK_HOSTS). The job's thread shows it as text.`,
};

/** The outputs of a wait whose job's run has ended; `threadLink` already checked. */
export function waitOutputs(
  job: JobRecord,
  threadLink: SafeUrl | undefined,
  hints: Pick<RenderHints, 'prLinkHosts'>,
): WaitOutputs {
  const status = job.lastOutcome ?? job.phase;
  const pullRequest = pullRequestOf(job, hints);
  const note =
    typeof pullRequest === 'string' && pullRequest !== 'none' ? PULL_REQUEST_NOTES[pullRequest] : md``;
  return {
    job_id: job.id,
    status: escapeMrkdwn(status),
    summary: md`${outcomeSentence(status)}${note}`,
    ...(threadLink ? { thread_link: threadLink } : {}),
    ...(typeof pullRequest === 'object' ? { pull_request_link: pullRequest.link } : {}),
  };
}
