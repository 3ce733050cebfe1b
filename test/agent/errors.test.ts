import { describe, expect, it } from 'vitest';
import {
  AgentApiError,
  AgentBadRequestError,
  AgentInvalidResponseError,
  AgentNotFoundError,
  AgentOutcomeUnknownError,
  AgentRateLimitedError,
  AgentResponseTooLargeError,
  AgentUnauthorizedError,
  AgentUnavailableError,
} from '../../src/agent/errors.js';

/*
 * Callers branch on these errors with `instanceof` (retry or not, outcome unknown or surely not
 * sent), and logs show their names: each must say what it is, and belong to the families it does.
 */
describe('agent API errors', () => {
  it('name each kind, so a log line says which failure it was', () => {
    const cases: [AgentApiError, string][] = [
      [new AgentApiError('x'), 'AgentApiError'],
      [new AgentRateLimitedError('x'), 'AgentRateLimitedError'],
      [new AgentUnauthorizedError('x'), 'AgentUnauthorizedError'],
      [new AgentNotFoundError('x'), 'AgentNotFoundError'],
      [new AgentBadRequestError('x'), 'AgentBadRequestError'],
      [new AgentUnavailableError('x'), 'AgentUnavailableError'],
      [new AgentOutcomeUnknownError('x'), 'AgentOutcomeUnknownError'],
      [new AgentInvalidResponseError('x'), 'AgentInvalidResponseError'],
      [new AgentResponseTooLargeError('x', { limitBytes: 1 }), 'AgentResponseTooLargeError'],
    ];
    for (const [error, name] of cases) {
      expect(error.name).toBe(name);
      expect(error).toBeInstanceOf(AgentApiError);
      expect(error).toBeInstanceOf(Error);
      expect(String(error)).toBe(`${name}: ${error.message}`);
    }
  });

  it('keep the HTTP status and the cause they were given', () => {
    const cause = new Error('socket hang up');
    const error = new AgentUnavailableError('agent API answered 503', { status: 503, cause });
    expect(error.status).toBe(503);
    expect(error.cause).toBe(cause);
    expect(new AgentOutcomeUnknownError('timed out').status).toBeUndefined();
  });

  it('mark a rate limit as 429, with the reset time when the API said one', () => {
    const resetAt = new Date(Date.UTC(2026, 10, 25, 13, 0));
    const limited = new AgentRateLimitedError('hourly limit', { resetAt });
    expect(limited.status).toBe(429);
    expect(limited.resetAt).toEqual(resetAt);
    expect(new AgentRateLimitedError('hourly limit').resetAt).toBeUndefined();
  });

  it("keep a refusal's explanation apart from the message, 400 unless told otherwise", () => {
    const refused = new AgentBadRequestError('prompt is required');
    expect(refused.detail).toBe('prompt is required');
    expect(refused.message).toBe('agent API rejected the request: prompt is required');
    expect(refused.status).toBe(400);
    expect(new AgentBadRequestError('conflict', { status: 409 }).status).toBe(409);
  });

  it('handle an answer too large as a malformed one, keeping the limit read', () => {
    const tooLarge = new AgentResponseTooLargeError('answer over the limit', {
      status: 200,
      limitBytes: 1_048_576,
    });
    expect(tooLarge).toBeInstanceOf(AgentInvalidResponseError);
    expect(tooLarge.limitBytes).toBe(1_048_576);
    expect(tooLarge.status).toBe(200);
    // Not one of the kinds that are retried or reported as unknown by their class alone.
    expect(tooLarge).not.toBeInstanceOf(AgentUnavailableError);
    expect(tooLarge).not.toBeInstanceOf(AgentOutcomeUnknownError);
  });
});
