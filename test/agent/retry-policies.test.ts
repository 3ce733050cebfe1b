import { describe, expect, it } from 'vitest';
import { failureOfStatus, unreachedFailure } from '../../src/agent/attempt-failures.js';
import {
  type AgentApiError,
  AgentBadRequestError,
  AgentInvalidResponseError,
  AgentNotFoundError,
  AgentOutcomeUnknownError,
  AgentRateLimitedError,
  AgentResponseTooLargeError,
  AgentUnauthorizedError,
  AgentUnavailableError,
} from '../../src/agent/errors.js';
import {
  GET_MAX_RETRY_AFTER_MS,
  getPolicy,
  leasesFor,
  longestAgentCallMs,
  POST_MAX_RETRY_AFTER_MS,
  postPolicy,
  type RetryPolicy,
  retryPolicies,
} from '../../src/agent/retry-policies.js';
import { readConfig } from '../../src/config/config.js';
import { VALID_ENV } from '../helpers/config.js';

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

const timeoutOf = (env: Record<string, string> = {}) => readConfig({ ...VALID_ENV, ...env }).agent.timeoutMs;

describe('leasesFor', () => {
  it('with the default agent API time-out (6 s), gives the holds that follow from it', () => {
    const leases = leasesFor(timeoutOf());
    expect(leases).toEqual({
      // 3 POST attempts of 6 s, backoffs of at most 600 and 1,200 ms, two Retry-Afters of 5 s; a quarter more.
      agentWrite: { callMs: 29_800, leaseMs: 37_250 },
      // 4 GET attempts of 6 s, backoffs of at most 500, 1,000 and 2,000 ms, three Retry-Afters of 10 s.
      agentRead: { callMs: 57_500, leaseMs: 71_875 },
      // One Slack call of at most 10 s.
      delivery: { callMs: 10_000, leaseMs: 12_500 },
    });
  });

  it('follows DOCS_AGENT_API_TIMEOUT_MS: every attempt may take the whole time-out', () => {
    const leases = leasesFor(timeoutOf({ DOCS_AGENT_API_TIMEOUT_MS: '30000' }));
    expect(leases.agentWrite).toEqual({ callMs: 3 * 30_000 + 11_800, leaseMs: 127_250 });
    expect(leases.agentRead).toEqual({ callMs: 4 * 30_000 + 33_500, leaseMs: 191_875 });
  });

  it('keeps the delivery lease apart from the agent API: Slack calls have their own time-out', () => {
    expect(leasesFor(100).delivery).toEqual(leasesFor(120_000).delivery);
  });

  it('always leaves a margin of at least 2 s between the claim and the call it guards', () => {
    for (const timeout of [100, 6_000, 120_000]) {
      for (const lease of Object.values(leasesFor(timeout))) {
        expect(lease.leaseMs - lease.callMs).toBeGreaterThanOrEqual(2_000);
        expect(lease.leaseMs).toBeGreaterThanOrEqual(lease.callMs * 1.25);
      }
    }
  });

  it('holds a poll longer than a write: reads are retried more often and wait out longer Retry-Afters', () => {
    const { agentRead, agentWrite } = leasesFor(6_000);
    expect(agentRead.callMs).toBeGreaterThan(agentWrite.callMs);
  });
});
