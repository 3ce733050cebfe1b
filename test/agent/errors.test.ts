import { describe, expect, it } from 'vitest';
import { failureOfStatus, unreachedFailure } from '../../src/agent/attempt-failures.js';
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
  GET_MAX_RETRY_AFTER_MS,
  getPolicy,
  longestAgentCallMs,
  POST_MAX_RETRY_AFTER_MS,
  postPolicy,
  type RetryPolicy,
  retryPolicies,
} from '../../src/agent/errors.js';

const unavailable = new AgentUnavailableError('503');
const limited = new AgentRateLimitedError('429');
/** Failures that no wait can mend. */
const final: AgentApiError[] = [
  new AgentUnauthorizedError('401', { status: 401 }),
  new AgentNotFoundError('404', { status: 404 }),
  new AgentBadRequestError('prompt is empty'),
  new AgentInvalidResponseError('not a job'),
  new AgentResponseTooLargeError('too long', { limitBytes: 1 }),
  new AgentOutcomeUnknownError('500 on a POST'),
];

describe('reads (GET)', () => {
  it('are retried when the API is unavailable or rate limited, with a short or no Retry-After', () => {
    for (const error of [unavailable, limited]) {
      for (const noEffect of [true, false]) {
        expect(getPolicy.shouldRetry(error, noEffect, undefined)).toBe(true);
        expect(getPolicy.shouldRetry(error, noEffect, 0)).toBe(true);
        expect(getPolicy.shouldRetry(error, noEffect, GET_MAX_RETRY_AFTER_MS)).toBe(true);
      }
    }
  });

  it('go back to the poller when asked to wait longer than ten seconds', () => {
    expect(GET_MAX_RETRY_AFTER_MS).toBe(10_000);
    expect(getPolicy.shouldRetry(unavailable, false, GET_MAX_RETRY_AFTER_MS + 1)).toBe(false);
    expect(getPolicy.shouldRetry(limited, true, 3_600_000)).toBe(false);
  });

  it('are never retried on a key, job, request or body the API refused', () => {
    for (const error of final) expect(getPolicy.shouldRetry(error, true, undefined)).toBe(false);
  });
});

describe('creates and follow-ups (POST)', () => {
  it('are retried when unavailable only if the request surely had no effect', () => {
    expect(postPolicy.shouldRetry(unavailable, true, undefined)).toBe(true);
    expect(postPolicy.shouldRetry(unavailable, true, POST_MAX_RETRY_AFTER_MS)).toBe(true);
    expect(postPolicy.shouldRetry(unavailable, false, undefined)).toBe(false);
    expect(postPolicy.shouldRetry(unavailable, true, POST_MAX_RETRY_AFTER_MS + 1)).toBe(false);
  });

  it('wait out a rate limit only when the API names a short wait: without one it is the hourly quota', () => {
    expect(POST_MAX_RETRY_AFTER_MS).toBe(5_000);
    expect(postPolicy.shouldRetry(limited, true, undefined)).toBe(false);
    expect(postPolicy.shouldRetry(limited, true, 0)).toBe(true);
    expect(postPolicy.shouldRetry(limited, true, POST_MAX_RETRY_AFTER_MS)).toBe(true);
    expect(postPolicy.shouldRetry(limited, true, POST_MAX_RETRY_AFTER_MS + 1)).toBe(false);
    expect(postPolicy.shouldRetry(limited, false, 0)).toBe(false);
  });

  it('are never retried once the outcome is unknown, nor on a refusal', () => {
    for (const error of final) {
      expect(postPolicy.shouldRetry(error, true, 0)).toBe(false);
      expect(postPolicy.shouldRetry(error, false, undefined)).toBe(false);
    }
  });

  it('try fewer times than reads, and the exported set is these two policies', () => {
    expect(postPolicy.retries).toBeLessThan(getPolicy.retries);
    expect(retryPolicies).toEqual({ get: getPolicy, post: postPolicy });
  });
});

describe('the decision on each way an attempt can end', () => {
  const decide = (policy: RetryPolicy, method: 'GET' | 'POST', status: number, wait?: number) => {
    const failure = failureOfStatus(
      status,
      'where',
      '',
      method,
      () => wait,
      () => 0,
    );
    return policy.shouldRetry(failure.error, failure.noEffect, failure.retryAfterMs);
  };

  it('a POST is repeated on 503 and a short 429, never on another 5xx (it may have started an agent)', () => {
    expect(decide(postPolicy, 'POST', 503)).toBe(true);
    expect(decide(postPolicy, 'POST', 429, 1_000)).toBe(true);
    for (const status of [500, 502, 504, 400, 401, 404])
      expect(decide(postPolicy, 'POST', status)).toBe(false);
    expect(decide(postPolicy, 'POST', 429)).toBe(false);
  });

  it('a GET is repeated on every 5xx and on a 429 without a long wait', () => {
    for (const status of [500, 502, 503, 504]) expect(decide(getPolicy, 'GET', status)).toBe(true);
    expect(decide(getPolicy, 'GET', 429)).toBe(true);
    expect(decide(getPolicy, 'GET', 503, 60_000)).toBe(false);
    for (const status of [400, 401, 403, 404]) expect(decide(getPolicy, 'GET', status)).toBe(false);
  });

  it('a POST is repeated after a refused connection but not after a time-out or a reset', () => {
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error(), { code: 'ECONNREFUSED' }),
    });
    const reset = new TypeError('fetch failed', {
      cause: Object.assign(new Error(), { code: 'ECONNRESET' }),
    });
    const timeout = new DOMException('timed out', 'TimeoutError');
    const retried = (error: unknown, policy: RetryPolicy, method: 'GET' | 'POST') => {
      const { failure } = unreachedFailure(error, method, '/job', 1_000);
      return policy.shouldRetry(failure.error, failure.noEffect, failure.retryAfterMs);
    };
    expect(retried(refused, postPolicy, 'POST')).toBe(true);
    expect(retried(reset, postPolicy, 'POST')).toBe(false);
    expect(retried(timeout, postPolicy, 'POST')).toBe(false);
    for (const error of [refused, reset, timeout]) expect(retried(error, getPolicy, 'GET')).toBe(true);
  });
});

describe('longestAgentCallMs', () => {
  it('adds every attempt, the longest randomised backoff before each retry, and the longest wait', () => {
    // 4 attempts of 10 s; backoffs of at most 2 × 250 × 2^n ms: 500, 1000, 2000; 10 s wait each.
    expect(longestAgentCallMs(10_000, getPolicy, 10_000)).toBe(40_000 + 3_500 + 30_000);
    // 3 attempts of 10 s; backoffs 600 and 1200 ms; 5 s wait each.
    expect(longestAgentCallMs(10_000, postPolicy, POST_MAX_RETRY_AFTER_MS)).toBe(30_000 + 1_800 + 10_000);
  });

  it("caps each backoff at the policy's longest", () => {
    const policy = { ...getPolicy, retries: 5, minTimeoutMs: 1_000, maxTimeoutMs: 3_000 };
    // 2000, then 4000, 8000, 16000, 32000 each capped at 3000.
    expect(longestAgentCallMs(100, policy, 0)).toBe(600 + 2_000 + 4 * 3_000);
  });

  it('is one time-out when nothing is retried', () => {
    expect(longestAgentCallMs(7_000, { ...postPolicy, retries: 0 }, 5_000)).toBe(7_000);
  });
});

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
