import { afterEach, describe, expect, it, vi } from 'vitest';
import { optionalInput, readStep, stepStartedAt } from '../../../src/features/workflow-steps/step-event.js';
import { createLogger } from '../../../src/logging/logger.js';
import { functionExecuted } from '../../helpers/workflow-steps.js';

const TOKEN = 'xwfp-test-not-a-real-token';

function read(event: unknown) {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', secrets: [TOKEN], write: (l) => lines.push(l) });
  const steps = { remember: vi.fn() };
  const before = Date.now();
  const step = readStep({ logger, steps }, event);
  return { step, lines, remember: steps.remember, before };
}

const executed = (fields: Record<string, unknown> = {}) => ({
  ...functionExecuted({
    callbackId: 'start_docs_agent_job',
    executionId: 'Fx0STEP1',
    inputs: { instruction: 'Document the CLI', channel_id: 'C0API', user_id: 'W0GRIDUSER' },
    token: TOKEN,
  }),
  ...fields,
});

/** When the clock (faked) says the event arrived. */
const RECEIVED_AT = Date.parse('2026-09-01T12:00:00.000Z');
const seconds = (ms: number) => (ms / 1000).toFixed(6);

afterEach(() => {
  vi.useRealTimers();
});

describe('readStep', () => {
  it('reads the execution and its inputs, and keeps the token to answer the step with', () => {
    const { step, remember, before } = read(executed());
    expect(step).toEqual({
      executionId: 'Fx0STEP1',
      inputs: { instruction: 'Document the CLI', channel_id: 'C0API', user_id: 'W0GRIDUSER' },
      elapsedMs: expect.any(Number),
    });
    expect(remember).toHaveBeenCalledWith('Fx0STEP1', TOKEN, expect.any(Number));
    // functionExecuted's event_ts is now, to the second.
    expect(remember.mock.calls[0]?.[2]).toBeGreaterThanOrEqual(before - 1_000);
  });

  it('a step with no inputs and no token: read, with empty inputs, and no token kept', () => {
    const { step, remember } = read(executed({ inputs: undefined, bot_access_token: undefined }));
    expect(step).toMatchObject({ executionId: 'Fx0STEP1', inputs: {} });
    expect(remember).not.toHaveBeenCalled();
  });

  it('counts a step Slack delivers again late from its start: the token’s lifetime and its age', () => {
    vi.useFakeTimers({ now: RECEIVED_AT });
    const startedAt = RECEIVED_AT - 5 * 60_000;
    const { step, remember } = read(executed({ event_ts: seconds(startedAt) }));
    expect(remember).toHaveBeenCalledWith('Fx0STEP1', TOKEN, startedAt);
    expect(step?.elapsedMs).toBe(5 * 60_000);
  });

  it('does not read a step Slack has already ended (delivered 15 minutes or more after its start), for either step', () => {
    vi.useFakeTimers({ now: RECEIVED_AT });
    const { step, remember, lines } = read(executed({ event_ts: seconds(RECEIVED_AT - 15 * 60_000) }));
    expect(step).toBeUndefined();
    expect(remember).not.toHaveBeenCalled();
    const logged = lines.filter((l) => l.includes('arrived after Slack ended it'));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('"executionId":"Fx0STEP1"');
    expect(logged[0]).not.toContain(TOKEN);
  });

  it.each([
    ['in the future (clocks that disagree)', seconds(RECEIVED_AT + 90_000)],
    ['missing', undefined],
    ['not a time', 'yesterday'],
    ['a number instead of text', 1_788_264_000],
  ])('counts a step whose event_ts is %s from its receipt, and still reads it', (_what, eventTs) => {
    vi.useFakeTimers({ now: RECEIVED_AT });
    const { step, remember } = read(executed({ event_ts: eventTs }));
    expect(remember).toHaveBeenCalledWith('Fx0STEP1', TOKEN, RECEIVED_AT);
    expect(step?.elapsedMs).toBe(0);
  });

  it.each([
    ['without its execution id', { function_execution_id: undefined }, 'function_execution_id: invalid_type'],
    ['whose function has no callback_id', { function: { id: 'Fn0' } }, 'function.callback_id: invalid_type'],
    ['whose inputs are a list', { inputs: ['Document the CLI'] }, 'inputs: invalid_type'],
    ['of another type', { type: 'function_executed_v2' }, 'type: invalid_value'],
    ['with an empty token', { bot_access_token: '' }, 'bot_access_token: too_small'],
  ])(
    'an event %s is not read: logged with the field that failed, the token never',
    (_what, fields, field) => {
      const { step, lines, remember } = read(executed(fields));
      expect(step).toBeUndefined();
      expect(remember).not.toHaveBeenCalled();
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0] as string)).toMatchObject({
        level: 'warn',
        msg: 'workflow step event not understood',
        fields: [field],
      });
      expect(lines[0]).not.toContain(TOKEN);
    },
  );
});

describe('stepStartedAt', () => {
  it.each([
    ['1788264000.000100', 1_788_264_000_000],
    ['1788263999.999900', 1_788_263_999_999],
    ['1788264060.000000', 1_788_264_000_000],
    [' ', 1_788_264_000_000],
    ['0', 1_788_264_000_000],
    ['-5', 1_788_264_000_000],
    ['Infinity', 1_788_264_000_000],
  ])('reads event_ts %j received at 1788264000000 as %d', (eventTs, startedAt) => {
    expect(stepStartedAt(eventTs, 1_788_264_000_000)).toBe(startedAt);
  });
});

describe('optionalInput', () => {
  it.each([
    [undefined, undefined],
    [null, undefined],
    ['', undefined],
    ['   ', undefined],
    [' 1700000100.000100 ', '1700000100.000100'],
  ])('reads %j as %j (an input Workflow Builder left empty arrives in any of these)', (value, read) => {
    expect(optionalInput.parse(value)).toBe(read);
  });

  it('does not read an input that is not text', () => {
    expect(optionalInput.safeParse(42).success).toBe(false);
  });
});
