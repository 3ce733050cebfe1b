/**
 * The Workflow Builder steps' listeners: each step's `function_executed` event read the same way
 * (its execution, its token kept for the answer, how long ago it started), then "Start a docs
 * agent job" and "Wait for a docs agent job".
 */

import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { type Config, servesProject } from '../../config/config.js';
import { failedFields } from '../../http/not-recorded.js';
import { type JobService, type RecordedWorkDeps, runRecorded } from '../../jobs/job-service.js';
import type { Logger } from '../../logging/logger.js';
import { STEP_TOKEN_MS, type StepCompleter } from '../../slack/function-steps.js';
import { isDirectMessage, userIdSchema } from '../../slack/ids.js';
import { mrkdwnToPlain } from '../../slack/mrkdwn.js';
import { awaitStep, recordStep, refuseStep, type StepAnswerDeps, type StepRecordDeps } from './record.js';
import { stepText } from './wording.js';

/** What reading a step's event takes: the logs, and where each execution's token is kept. */
export interface StepEventDeps {
  logger: Logger;
  /** Keeps the token each step execution carries, to answer it with. */
  steps: Pick<StepCompleter, 'remember'>;
}

/**
 * The parts of a `function_executed` event (a Workflow Builder step of this app running) the
 * steps read. Its `inputs` are parsed by each step; the token is kept only in memory.
 */
export const stepEventSchema = z.object({
  type: z.literal('function_executed'),
  function_execution_id: z.string().min(1),
  function: z.object({ callback_id: z.string().min(1) }),
  inputs: z.record(z.string(), z.unknown()).default({}),
  bot_access_token: z.string().min(1).optional(),
  // When the step started (seconds, with a fraction, as text). One Slack cannot give does not
  // make the step unreadable: it is then counted from its receipt.
  event_ts: z.string().optional().catch(undefined),
});

export type StepEvent = z.infer<typeof stepEventSchema>;

/** An optional input Workflow Builder left empty arrives missing, null or as an empty string. */
export const optionalInput = z
  .string()
  .nullish()
  .transform((value) => (value?.trim() ? value.trim() : undefined));

/**
 * When a step started, in epoch milliseconds: its event's `event_ts`, which stays the same when
 * Slack delivers the event again later. Never after `receivedAt`: a start in the future (clocks
 * that disagree) or none at all counts as the receipt.
 */
export function stepStartedAt(eventTs: string | undefined, receivedAt: number): number {
  const seconds = eventTs?.trim() ? Number(eventTs) : Number.NaN;
  if (!Number.isFinite(seconds) || seconds <= 0) return receivedAt;
  return Math.min(Math.floor(seconds * 1000), receivedAt);
}

/** A step's event as read: its execution, its inputs, and how long ago the step started. */
export interface ReadStep {
  executionId: string;
  inputs: Record<string, unknown>;
  /** How long before its receipt the step started, in milliseconds (0 or more). */
  elapsedMs: number;
}

/**
 * Reads a step's event and keeps its token for the step's answer (its lifetime counted from the
 * step's start); undefined (logged with the fields that failed, never their values) when it
 * cannot be read.
 */
export function readStep(deps: StepEventDeps, event: unknown): ReadStep | undefined {
  const receivedAt = Date.now();
  const parsed = stepEventSchema.safeParse(event);
  if (!parsed.success) {
    deps.logger.warn('workflow step event not understood', { fields: failedFields(parsed.error) });
    return undefined;
  }
  const { function_execution_id: executionId, bot_access_token: token, inputs } = parsed.data;
  const startedAt = stepStartedAt(parsed.data.event_ts, receivedAt);
  if (receivedAt - startedAt >= STEP_TOKEN_MS) {
    // Slack has ended it: no answer can reach it, and a job started for it would run unseen.
    deps.logger.warn('a workflow step arrived after Slack ended it; it is not answered', {
      executionId,
      startedMsAgo: receivedAt - startedAt,
    });
    return undefined;
  }
  if (token) deps.steps.remember(executionId, token, startedAt);
  return { executionId, inputs, elapsedMs: receivedAt - startedAt };
}

/** The step's callback_id: the key of its definition under the manifest's `functions`. */
export const START_STEP_CALLBACK_ID = 'start_docs_agent_job';

/** Slack re-delivers an event whose answer was an error at most this many times. */
const SLACK_EVENT_RETRIES = 3;

/** The step's inputs, named as the manifest's `input_parameters`. */
const startInputsSchema = z.object({
  instruction: z.string().default(''),
  channel_id: z.string().min(1),
  /**
   * The person who used the workflow, as Slack verified it (`slack#/types/user_context`: no
   * builder can set it). Only its id is read: its `secret` is dropped here, never kept or logged.
   */
  user_context: z.object({ id: userIdSchema }).nullish(),
  /** "On behalf of": whoever the builder chose; allowed only as `WORKFLOW_ON_BEHALF_OF_USER_IDS` says. */
  user_id: optionalInput.pipe(userIdSchema.optional()),
  thread_ts: optionalInput,
  project: optionalInput,
});

type StepInputs = z.infer<typeof startInputsSchema>;

/** What the step takes: the settings its inputs are checked against, and the job service. */
export interface StartStepDeps extends StepEventDeps, RecordedWorkDeps, StepRecordDeps {
  config: Pick<Config, 'agent' | 'channelProjects' | 'workflowOnBehalfOf'>;
  jobs: Pick<JobService, 'recordJob' | 'startJob' | 'handBack'>;
  /** Socket Mode acknowledges events before listeners run: Slack will not deliver them again. */
  socketMode: boolean;
}

/**
 * "Start a docs agent job" run by a workflow: records the job for the person who used the
 * workflow (or the one it names, where the operator allows it) in the channel it names, and
 * starts it like a typed command (every check of the job start applies to that person). The
 * step is answered once the start is settled, by the outbox (see `jobs/workflow-steps.ts`): with
 * the job's id and thread, or with why it did not start, in words for the workflow's builder.
 */
export function startJobStep(deps: StartStepDeps) {
  return async ({
    event,
    body,
    context,
    fail,
  }: SlackEventMiddlewareArgs<'function_executed'> & AllMiddlewareArgs) => {
    const step = readStep(deps, event);
    if (!step) return;
    const { executionId } = step;
    const parsed = startInputsSchema.safeParse(step.inputs);
    if (!parsed.success) {
      // Which inputs failed, never their values (what a workflow was given).
      deps.logger.warn('workflow step inputs not understood', { fields: failedFields(parsed.error) });
    }
    try {
      if (!parsed.success) return await refuseStep(deps, executionId, stepText.notUnderstood());
      const inputs = parsed.data;
      const problem = inputProblem(deps, inputs);
      if (problem) return await refuseStep(deps, executionId, problem);
      const person = personOf(deps, inputs);
      if ('refused' in person) return await refuseStep(deps, executionId, person.refused);
      const accepted = await recordStep(deps, {
        teamId: (body as { team_id?: string }).team_id ?? context.teamId ?? '',
        userId: person.userId,
        channelId: inputs.channel_id,
        threadTs: inputs.thread_ts,
        instruction: inputs.instruction,
        projectId: inputs.project,
        executionId,
      });
      if (typeof accepted === 'object' && accepted.created) {
        const id = accepted.job;
        // Who a workflow acted for, for the operator: ids only.
        if (person.named)
          deps.logger.info('workflow step for a named person', {
            jobId: id,
            executionId,
            user: person.userId,
          });
        runRecorded(deps, 'start job', () => deps.jobs.startJob(id), { jobId: id });
      }
    } catch (error) {
      // Over HTTP the error answer makes Slack deliver the event again; when none will come,
      // the step is failed now, so the workflow does not wait for an answer that never comes.
      const lastChance = deps.socketMode || (context.retryNum ?? 0) >= SLACK_EVENT_RETRIES;
      deps.logger.error('could not record a workflow step', { error, redeliveryExpected: !lastChance });
      if (!lastChance) throw error;
      await fail({ error: stepText.notRecorded() }).catch((failed: unknown) =>
        deps.logger.error('could not fail a workflow step', { error: failed }),
      );
    }
  };
}

/** What makes the inputs unusable before anything is recorded; the job start checks the rest. */
function inputProblem(deps: Pick<StartStepDeps, 'config'>, inputs: StepInputs): string | undefined {
  if (!mrkdwnToPlain(inputs.instruction).trim()) return stepText.noInstruction();
  if (isDirectMessage(inputs.channel_id)) return stepText.direct();
  if (inputs.project && !servesProject(deps.config, inputs.project)) return stepText.unknownProject();
  return undefined;
}

/**
 * Whose job it is: the person who used the workflow, as Slack verified it. "On behalf of" is for
 * workflows no person uses (a schedule, an event, one built before the step took a verified
 * person): it may name only people the operator listed (`WORKFLOW_ON_BEHALF_OF_USER_IDS`). Where
 * Slack names the person who used the workflow, the job is theirs and naming anyone else is
 * refused: otherwise anyone who may run a workflow would act, and spend the hourly limits, as a
 * listed person, past the allow-lists and the guest rule that judge them.
 */
function personOf(
  deps: Pick<StartStepDeps, 'config'>,
  inputs: StepInputs,
): { userId: string; named: boolean } | { refused: string } {
  const usedBy = inputs.user_context?.id;
  const named = inputs.user_id;
  if (named === undefined || named === usedBy) {
    return usedBy === undefined ? { refused: stepText.noPerson() } : { userId: usedBy, named: false };
  }
  if (usedBy !== undefined) return { refused: stepText.onBehalfOfWithPerson(named, usedBy) };
  const allowed = deps.config.workflowOnBehalfOf;
  if (allowed.has(named)) return { userId: named, named: true };
  return { refused: stepText.onBehalfOfRefused(named, allowed.size > 0) };
}

/** The step's callback_id: the key of its definition under the manifest's `functions`. */
export const WAIT_STEP_CALLBACK_ID = 'wait_for_docs_agent_job';

/** The step's inputs, named as the manifest's `input_parameters`: the start step's `job_id` output. */
const waitInputsSchema = z.object({ job_id: z.coerce.number().int().positive() });

/**
 * "Wait for a docs agent job" run by a workflow: recorded at once, and answered by the outbox when
 * the job's run ends, or failed with a reason shortly before Slack's time limit ends the step.
 * Both count from the step's start, however late Slack delivered its event: one delivered after
 * Slack ended the step is only logged (no answer can reach it).
 */
export function waitJobStep(deps: StepEventDeps & StepAnswerDeps) {
  return async ({ event }: SlackEventMiddlewareArgs<'function_executed'> & AllMiddlewareArgs) => {
    const step = readStep(deps, event);
    if (!step) return;
    const { executionId, elapsedMs } = step;
    const parsed = waitInputsSchema.safeParse(step.inputs);
    // A store failure is passed on: Slack's error answer brings the event again.
    if (parsed.success) return awaitStep(deps, executionId, parsed.data.job_id, elapsedMs);
    deps.logger.warn('workflow step inputs not understood', { fields: failedFields(parsed.error) });
    await refuseStep(deps, executionId, stepText.notUnderstood());
  };
}
