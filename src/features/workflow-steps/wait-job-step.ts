import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { failedFields } from '../../http/not-recorded.js';
import { awaitStep, refuseStep, type StepAnswerDeps } from './record.js';
import { readStep, type StepEventDeps } from './step-event.js';
import { stepText } from './wording.js';

/** The step's callback_id: the key of its definition under the manifest's `functions`. */
export const WAIT_STEP_CALLBACK_ID = 'wait_for_docs_agent_job';

/** The step's inputs, named as the manifest's `input_parameters`: the start step's `job_id` output. */
const inputsSchema = z.object({ job_id: z.coerce.number().int().positive() });

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
    const parsed = inputsSchema.safeParse(step.inputs);
    // A store failure is passed on: Slack's error answer brings the event again.
    if (parsed.success) return awaitStep(deps, executionId, parsed.data.job_id, elapsedMs);
    deps.logger.warn('workflow step inputs not understood', { fields: failedFields(parsed.error) });
    await refuseStep(deps, executionId, stepText.notUnderstood());
  };
}
