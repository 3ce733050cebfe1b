import { z } from 'zod';
import { failedFields } from '../../http/not-recorded.js';
import type { Logger } from '../../logging/logger.js';
import { STEP_TOKEN_MS, type StepCompleter } from '../../slack/function-steps.js';

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
