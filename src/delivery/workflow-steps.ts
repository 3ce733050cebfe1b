import type { RenderHints } from '../blocks/messages.js';
import { waitText } from '../blocks/step-texts.js';
import { waitOutputs } from '../blocks/wait-outputs.js';
import type { StepCompletion, StepWait } from '../domain/outbox-payload.js';
import { NO_WAY_ON } from '../domain/phases.js';
import type { Logger } from '../logging/logger.js';
import {
  isAnswerRefused,
  isExecutionClosed,
  type StepCompleter,
  type StepResult,
  WAIT_LIMIT_MS,
} from '../slack/function-steps.js';
import { checkUrl, permalink } from '../slack/links.js';
import type { JobRecord, JobsStore, OutboxItem } from '../store/types.js';

/** What delivering a step item came to: done, given up (Slack's code), or look again at `laterAt`. */
export type StepDelivery = undefined | string | { laterAt: number };

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
 * only what a post may show (`blocks/wait-outputs.ts`). Slack refusing an answer for good gives
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
    async send(item: OutboxItem, payload: StepCompletion | StepWait): Promise<StepDelivery> {
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
