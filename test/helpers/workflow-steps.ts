import { mrkdwnToPlain } from '../../src/slack/mrkdwn.js';

/** A Workflow Builder step's answer as the Slack stand-in received it. */
export interface StepCompletionCall {
  method: 'functions.completeSuccess' | 'functions.completeError';
  executionId: string;
  outputs?: Record<string, unknown>;
  error?: string;
  /** Which token the call carried: the execution's own, or the app's bot token. */
  token: 'function' | 'bot';
}

/**
 * Slack's side of custom steps for the stand-in: the tokens it gave step executions, and the
 * answers it accepted. Like Slack, an execution takes one answer; a second is refused.
 */
export function createStepLedger() {
  const completions: StepCompletionCall[] = [];
  /** Tokens Slack sent with `function_executed` events, by token. */
  const functionTokens = new Map<string, string>();
  const done = new Set<string>();

  const complete =
    (method: StepCompletionCall['method']) =>
    (args: Record<string, unknown>, token: 'function' | 'bot'): Record<string, unknown> => {
      const executionId = String(args.function_execution_id ?? '');
      if (!executionId) return { ok: false, error: 'invalid_arguments' };
      if (done.has(executionId)) return { ok: false, error: 'execution_not_in_running_state' };
      done.add(executionId);
      completions.push({
        method,
        executionId,
        token,
        ...(method === 'functions.completeSuccess'
          ? { outputs: args.outputs as Record<string, unknown> }
          : { error: String(args.error) }),
      });
      return { ok: true };
    };

  return {
    completions,
    functionTokens,
    /** The answers Slack accepted for one execution. */
    completionsOf: (executionId: string) => completions.filter((c) => c.executionId === executionId),
    /** Whether a bearer token is one Slack gave a step execution (valid only for its answer). */
    isFunctionToken: (token: string) => functionTokens.has(token),
    /** Forgets every token and answer, as for a new workspace. */
    reset() {
      completions.length = 0;
      functionTokens.clear();
      done.clear();
    },
    methods: {
      'functions.completeSuccess': complete('functions.completeSuccess'),
      'functions.completeError': complete('functions.completeError'),
    },
  };
}

export type StepLedger = ReturnType<typeof createStepLedger>;

/** A `function_executed` event of one of the app's steps, as Slack sends it (Events API). */
export function functionExecuted(fields: {
  callbackId: string;
  executionId: string;
  inputs: Record<string, unknown>;
  token: string;
}): Record<string, unknown> {
  return {
    type: 'function_executed',
    function: {
      id: 'Fn0DOCSSTEP',
      callback_id: fields.callbackId,
      title: fields.callbackId,
      type: 'app',
      input_parameters: [],
      output_parameters: [],
      app_id: 'A0DOCS',
      date_created: 1_700_000_000,
      date_updated: 1_700_000_000,
      date_deleted: 0,
    },
    inputs: fields.inputs,
    function_execution_id: fields.executionId,
    workflow_execution_id: `Wx${fields.executionId}`,
    event_ts: `${Math.floor(Date.now() / 1000)}.000100`,
    bot_access_token: fields.token,
  };
}

/** Looks like the secret Slack puts in a `user_context`, and is fake. */
export const USER_CONTEXT_SECRET = 'test-user-context-secret-0000';

/**
 * A `slack#/types/user_context` input as Slack fills it for the person who used the workflow
 * (docs.slack.dev, "user_context type"): their id and a secret.
 */
export const userContext = (id: string) => ({ id, secret: USER_CONTEXT_SECRET });

/** What a text written for a chat would show that a workflow's activity must not. */
export function chatHabits(said: string): string[] {
  const found: string[] = [];
  if (/:[a-z0-9_+-]+:/.test(said)) found.push('an emoji code');
  if (/\byou(r)?\b/i.test(said)) found.push('"you"');
  if (/\bI\b/.test(said)) found.push('"I"');
  if (/run \/docs-agent|run the command/i.test(said)) found.push('"run /docs-agent"');
  if (/<[@#!]/.test(said)) found.push('Slack markup');
  if (mrkdwnToPlain(said) !== said) found.push('text that is not plain');
  return found;
}
