import { z } from 'zod';
import { failedFields } from '../events/unreadable.js';
import type { ListenerDeps } from '../types.js';

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
});

export type StepEvent = z.infer<typeof stepEventSchema>;

/** An optional input Workflow Builder left empty arrives missing, null or as an empty string. */
export const optionalInput = z
  .string()
  .nullish()
  .transform((value) => (value?.trim() ? value.trim() : undefined));

/**
 * Reads a step's event and keeps its token for the step's answer; undefined (logged with the
 * fields that failed, never their values) when it cannot be read.
 */
export function readStep(
  deps: Pick<ListenerDeps, 'logger' | 'steps'>,
  event: unknown,
): { executionId: string; inputs: Record<string, unknown> } | undefined {
  const parsed = stepEventSchema.safeParse(event);
  if (!parsed.success) {
    deps.logger.warn('workflow step event not understood', { fields: failedFields(parsed.error) });
    return undefined;
  }
  const { function_execution_id: executionId, bot_access_token: token, inputs } = parsed.data;
  if (token) deps.steps.remember(executionId, token, Date.now());
  return { executionId, inputs };
}
