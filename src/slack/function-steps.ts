import type { SlackCaller } from './caller.js';
import { SlackCallError } from './caller.js';

/**
 * Slack's answer to a Workflow Builder step: `functions.completeSuccess` with the step's outputs
 * (named and typed as the manifest's `output_parameters`), or `functions.completeError` with a
 * message Slack shows in the workflow's activity.
 */
export type StepResult = { outputs: Record<string, string | number> } | { error: string };

/**
 * How long Slack keeps a step execution's token: until the step completes, or 15 minutes from the
 * step's start, in milliseconds. A step still open after that cannot be completed with it.
 */
export const STEP_TOKEN_MS = 15 * 60_000;

/**
 * How long a "Wait for a docs agent job" step waits before failing, in milliseconds from the
 * step's start: under {@link STEP_TOKEN_MS}, so the step fails with a reason instead of running
 * out of time.
 */
export const WAIT_LIMIT_MS = 14 * 60_000;

/** Errors that say the execution cannot take an answer any more (it ended, or never existed). */
const EXECUTION_CLOSED = new Set(['execution_not_in_running_state', 'function_execution_not_found']);
/** Errors of a step's own token that the app's bot token may not have. */
const TOKEN_REFUSED = new Set([
  'invalid_auth',
  'not_authed',
  'token_expired',
  'token_revoked',
  'account_inactive',
]);

/** Whether Slack refused an answer because the execution is already over. */
export const isExecutionClosed = (error: unknown): boolean =>
  error instanceof SlackCallError && EXECUTION_CLOSED.has(error.code);

/**
 * Errors of an answer that no retry can fix, beyond Slack's permanent ones (`slack-errors.ts`):
 * `access_denied`, "this actor does not have access to this function execution", stays so until
 * the execution closes.
 */
const ANSWER_REFUSED = new Set(['access_denied']);

/** Whether Slack refused a step's answer for good: sending it again cannot succeed. */
export const isAnswerRefused = (error: unknown): error is SlackCallError =>
  error instanceof SlackCallError && (error.permanent || ANSWER_REFUSED.has(error.code));

export interface StepCompleter {
  /**
   * Keeps the token Slack sent with a step execution, in memory only and until
   * {@link STEP_TOKEN_MS} after `startedAt` (when the step started, which a late delivery of its
   * event does not move): it is a secret, and it is worthless after that.
   */
  remember(executionId: string, token: string, startedAt: number): void;
  /**
   * Answers the step. With the execution's own token while this process holds it, as Slack's
   * custom steps expect; after a restart (or once it is refused) with the app's bot token. Throws
   * {@link SlackCallError}.
   */
  complete(executionId: string, result: StepResult, now: number): Promise<void>;
}

/** Answers steps through the one caller, which masks the outputs and the error as every text the bot sends. */
export function createStepCompleter(caller: SlackCaller): StepCompleter {
  const tokens = new Map<string, { token: string; until: number }>();

  const forget = (now: number) => {
    for (const [id, held] of tokens) if (held.until <= now) tokens.delete(id);
  };

  /** One answer, with the execution's own `token` if given (the client's bot token otherwise). */
  async function call(executionId: string, result: StepResult, token: string | undefined): Promise<void> {
    // The token is added unmasked: it is Slack's own, and must reach Slack as it was given.
    const as = token ? { token } : {};
    const execution = { function_execution_id: executionId };
    if ('error' in result)
      await caller.call('functions.completeError', { ...execution, error: result.error }, (client, args) =>
        client.functions.completeError({ ...args, ...as }),
      );
    else
      await caller.call(
        'functions.completeSuccess',
        { ...execution, outputs: result.outputs },
        (client, args) => client.functions.completeSuccess({ ...args, ...as }),
      );
  }

  return {
    remember(executionId, token, startedAt) {
      forget(startedAt);
      tokens.set(executionId, { token, until: startedAt + STEP_TOKEN_MS });
    },

    async complete(executionId, result, now) {
      forget(now);
      const held = tokens.get(executionId)?.token;
      try {
        await call(executionId, result, held);
      } catch (error) {
        if (!(held && error instanceof SlackCallError && TOKEN_REFUSED.has(error.code))) throw error;
        await call(executionId, result, undefined);
      }
      // Spent: Slack revokes it once the step completes.
      tokens.delete(executionId);
    },
  };
}
