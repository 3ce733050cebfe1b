import { afterEach, describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/logging/logger.js';
import { createSlackCaller, SlackCallError } from '../../src/slack/caller.js';
import {
  createStepCompleter,
  isAnswerRefused,
  isExecutionClosed,
  STEP_TOKEN_MS,
  WAIT_LIMIT_MS,
} from '../../src/slack/function-steps.js';
import { appSlackClient } from '../helpers/slack-client.js';
import { type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';

const STEP_TOKEN = 'xwfp-1111-2222-not-a-real-step-token';

let slack: SlackStandIn | undefined;
afterEach(async () => {
  await slack?.close();
  slack = undefined;
});

/** A secret of the deployment's, which the caller masks as the logs do. */
const SECRET = 'mint_fake0secret';

/**
 * A completer through the caller on the app's bot client, configured as the app's; Slack has
 * given `Fx1` its own token.
 */
async function completerOnStandIn() {
  slack = await startSlackStandIn();
  slack.steps.functionTokens.set(STEP_TOKEN, 'Fx1');
  const { client, logger } = appSlackClient(slack.apiUrl);
  const caller = createSlackCaller({ client, logger, redact: createRedactor([SECRET]) });
  return { slack, completer: createStepCompleter(caller) };
}

describe('answering a Workflow Builder step', () => {
  it('answers with the execution’s own token while it is held, its outputs as given', async () => {
    const { slack, completer } = await completerOnStandIn();
    completer.remember('Fx1', STEP_TOKEN, 0);
    await completer.complete('Fx1', { outputs: { job_id: 'j-1', changed_files: 3 } }, 1_000);
    expect(slack.steps.completions).toEqual([
      {
        method: 'functions.completeSuccess',
        executionId: 'Fx1',
        token: 'function',
        outputs: { job_id: 'j-1', changed_files: 3 },
      },
    ]);
    expect(slack.callsTo('functions.completeSuccess')[0]?.args.token).toBe(STEP_TOKEN);
  });

  it('fails a step with completeError and its message', async () => {
    const { slack, completer } = await completerOnStandIn();
    completer.remember('Fx1', STEP_TOKEN, 0);
    await completer.complete('Fx1', { error: 'The docs agent could not start: quota reached' }, 0);
    expect(slack.steps.completionsOf('Fx1')).toEqual([
      {
        method: 'functions.completeError',
        executionId: 'Fx1',
        token: 'function',
        error: 'The docs agent could not start: quota reached',
      },
    ]);
    expect(slack.callsTo('functions.completeSuccess')).toHaveLength(0);
  });

  it('masks secrets in its error and outputs, as everything the bot shows is masked, its token kept', async () => {
    const { slack, completer } = await completerOnStandIn();
    completer.remember('Fx1', STEP_TOKEN, 0);
    await completer.complete('Fx1', { error: `The docs agent API rejected: key ${SECRET}` }, 0);
    await completer.complete('Fx2', { outputs: { summary: `rotated ${SECRET}` } }, 0);
    expect(slack.steps.completions).toMatchObject([
      { executionId: 'Fx1', token: 'function', error: 'The docs agent API rejected: key [redacted]' },
      { executionId: 'Fx2', token: 'bot', outputs: { summary: 'rotated [redacted]' } },
    ]);
    expect(slack.callsTo('functions.completeError')[0]?.args.token).toBe(STEP_TOKEN);
  });

  it('answers with the bot token when it holds none (after a restart)', async () => {
    const { slack, completer } = await completerOnStandIn();
    await completer.complete('Fx1', { outputs: { job_id: 'j-1' } }, 0);
    expect(slack.steps.completionsOf('Fx1')).toMatchObject([{ token: 'bot' }]);
    expect(slack.callsTo('functions.completeSuccess')[0]?.args).not.toHaveProperty('token');
  });

  it('holds a token for 15 minutes at most, then answers with the bot token', async () => {
    const { slack, completer } = await completerOnStandIn();
    completer.remember('Fx1', STEP_TOKEN, 0);
    completer.remember('Fx2', STEP_TOKEN, 0);
    await completer.complete('Fx1', { outputs: {} }, STEP_TOKEN_MS - 1);
    await completer.complete('Fx2', { outputs: {} }, STEP_TOKEN_MS);
    expect(slack.steps.completions.map((c) => [c.executionId, c.token])).toEqual([
      ['Fx1', 'function'],
      ['Fx2', 'bot'],
    ]);
  });

  it('forgets expired tokens when another execution’s token is kept', async () => {
    const { slack, completer } = await completerOnStandIn();
    completer.remember('Fx1', STEP_TOKEN, 0);
    completer.remember('Fx2', 'xwfp-3333-4444-not-a-real-step-token', STEP_TOKEN_MS);
    await completer.complete('Fx1', { outputs: {} }, 0);
    expect(slack.steps.completionsOf('Fx1')).toMatchObject([{ token: 'bot' }]);
  });

  it('answers again with the bot token when Slack refuses the execution’s token', async () => {
    const { slack, completer } = await completerOnStandIn();
    completer.remember('Fx1', 'xwfp-9999-0000-not-a-real-revoked-token', 0);
    // Slack answers invalid_auth to a token it did not give (the stand-in records only the answer it took).
    await completer.complete('Fx1', { outputs: { job_id: 'j-1' } }, 0);
    expect(slack.steps.completionsOf('Fx1')).toMatchObject([{ token: 'bot', outputs: { job_id: 'j-1' } }]);
  });

  it('does not answer twice when Slack refuses for another reason, and says why', async () => {
    const { slack, completer } = await completerOnStandIn();
    completer.remember('Fx1', STEP_TOKEN, 0);
    slack.fail('functions.completeSuccess', { error: 'function_execution_not_found' });
    const error = await completer.complete('Fx1', { outputs: {} }, 0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SlackCallError);
    expect(error).toMatchObject({ code: 'function_execution_not_found' });
    expect(isExecutionClosed(error)).toBe(true);
    expect(String((error as Error).message)).not.toContain(STEP_TOKEN);
    expect(slack.callsTo('functions.completeSuccess')).toHaveLength(1);
  });

  it('spends the token once the step is answered: a second answer is refused as closed', async () => {
    const { slack, completer } = await completerOnStandIn();
    completer.remember('Fx1', STEP_TOKEN, 0);
    await completer.complete('Fx1', { outputs: {} }, 0);
    const again = await completer.complete('Fx1', { error: 'late' }, 0).catch((e: unknown) => e);
    expect(isExecutionClosed(again)).toBe(true);
    expect(slack.callsTo('functions.completeError')[0]?.args).not.toHaveProperty('token');
    expect(slack.steps.completionsOf('Fx1')).toHaveLength(1);
  });

  it('keeps rate limits and outages as errors that are not "closed"', async () => {
    const { slack, completer } = await completerOnStandIn();
    slack.fail('functions.completeError', { status: 429, retryAfter: 0 });
    const error = await completer.complete('Fx1', { error: 'x' }, 0).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ratelimited' });
    expect(isExecutionClosed(error)).toBe(false);
    expect(isExecutionClosed(new Error('execution_not_in_running_state'))).toBe(false);
  });

  it('holds a token 15 minutes from the step’s start, however late its event arrived', async () => {
    const { slack, completer } = await completerOnStandIn();
    const startedAt = 1_788_264_000_000;
    completer.remember('Fx1', STEP_TOKEN, startedAt);
    completer.remember('Fx2', STEP_TOKEN, startedAt);
    await completer.complete('Fx1', { outputs: {} }, startedAt + STEP_TOKEN_MS - 1);
    await completer.complete('Fx2', { outputs: {} }, startedAt + STEP_TOKEN_MS);
    expect(slack.steps.completions.map((c) => [c.executionId, c.token])).toEqual([
      ['Fx1', 'function'],
      ['Fx2', 'bot'],
    ]);
  });

  it('answers access_denied with one call, and calls it a refusal no retry can fix', async () => {
    const { slack, completer } = await completerOnStandIn();
    completer.remember('Fx1', STEP_TOKEN, 0);
    slack.fail('functions.completeError', { error: 'access_denied' });
    const error = await completer.complete('Fx1', { error: 'x' }, 0).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'access_denied' });
    expect(isAnswerRefused(error)).toBe(true);
    expect(slack.callsTo('functions.completeError')).toHaveLength(1);
  });

  it.each([
    ['access_denied', true],
    ['invalid_arguments', true],
    ['missing_scope', true],
    ['execution_not_in_running_state', false],
    ['ratelimited', false],
    ['http_503', false],
    ['request_failed', false],
  ])('counts %s as refused for good: %s', (code, refused) => {
    expect(isAnswerRefused(new SlackCallError('functions.completeSuccess', code))).toBe(refused);
  });

  it('gives up waiting on a job before Slack would end the step', () => {
    expect(WAIT_LIMIT_MS).toBeLessThan(STEP_TOKEN_MS);
  });
});
