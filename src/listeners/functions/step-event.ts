import { z } from 'zod';

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
