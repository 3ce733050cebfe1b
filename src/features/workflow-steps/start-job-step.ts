import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { type Config, servesProject } from '../../config/config.js';
import { failedFields } from '../../http/not-recorded.js';
import { type JobService, type RecordedWorkDeps, runRecorded } from '../../jobs/job-service.js';
import { isDirectMessage, userIdSchema } from '../../slack/ids.js';
import { mrkdwnToPlain } from '../../slack/mrkdwn.js';
import { recordStep, refuseStep, type StepRecordDeps } from './record.js';
import { optionalInput, readStep, type StepEventDeps } from './step-event.js';
import { stepText } from './wording.js';

/** The step's callback_id: the key of its definition under the manifest's `functions`. */
export const START_STEP_CALLBACK_ID = 'start_docs_agent_job';

/** Slack re-delivers an event whose answer was an error at most this many times. */
const SLACK_EVENT_RETRIES = 3;

/** The step's inputs, named as the manifest's `input_parameters`. */
const inputsSchema = z.object({
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

type StepInputs = z.infer<typeof inputsSchema>;

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
    const parsed = inputsSchema.safeParse(step.inputs);
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
