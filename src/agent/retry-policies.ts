import { type Leases, leaseFor } from '../cluster/lease.js';
import { SLACK_CALL_TIMEOUT_MS } from '../slack/client-options.js';
import { type AgentApiError, AgentRateLimitedError, AgentUnavailableError } from './errors.js';

/** When and how often a failed agent API request is tried again. Delays in milliseconds. */
export interface RetryPolicy {
  retries: number;
  minTimeoutMs: number;
  maxTimeoutMs: number;
  /**
   * @param error the typed failure of the attempt
   * @param noEffect whether the request surely did not take effect upstream
   * @param retryAfterMs what the API asked us to wait, if it said
   */
  shouldRetry(error: AgentApiError, noEffect: boolean, retryAfterMs: number | undefined): boolean;
}

/** Each retry's backoff is this many times the one before (up to the policy's longest). */
export const RETRY_FACTOR = 2;

/** Longest Retry-After a GET waits out in place; longer ones go back to the poller's schedule. */
export const GET_MAX_RETRY_AFTER_MS = 10_000;
/** Longest Retry-After a POST waits out; a longer 429 is the hourly quota and goes to the user. */
export const POST_MAX_RETRY_AFTER_MS = 5_000;

/**
 * Reads are safe to repeat: retried on network errors, time-outs, 5xx and 429 with a
 * short (or no) Retry-After. Never on 401/403/404/400 or an invalid body (an overlong one
 * included: the poller asks again on its own schedule).
 */
export const getPolicy: RetryPolicy = {
  retries: 3,
  minTimeoutMs: 250,
  maxTimeoutMs: 4_000,
  // A long Retry-After (on a 429 or a 5xx) goes back to the poller's own schedule.
  shouldRetry: (error, _noEffect, retryAfterMs) =>
    (error instanceof AgentUnavailableError || error instanceof AgentRateLimitedError) &&
    (retryAfterMs ?? 0) <= GET_MAX_RETRY_AFTER_MS,
};

/**
 * Creating a job or sending a follow-up is not idempotent: a repeat can start a second agent
 * and open a second pull request. Retried only when the request surely did not take effect:
 * connection refused, 503, or a 429 that asks for a short wait.
 */
export const postPolicy: RetryPolicy = {
  retries: 2,
  minTimeoutMs: 300,
  maxTimeoutMs: 2_000,
  shouldRetry: (error, noEffect, retryAfterMs) =>
    noEffect &&
    ((error instanceof AgentUnavailableError && (retryAfterMs ?? 0) <= POST_MAX_RETRY_AFTER_MS) ||
      (error instanceof AgentRateLimitedError &&
        retryAfterMs !== undefined &&
        retryAfterMs <= POST_MAX_RETRY_AFTER_MS)),
};

export const retryPolicies = { get: getPolicy, post: postPolicy };

/**
 * The longest an agent API request can take with its retries: every attempt up to the time-out,
 * and between attempts the longest backoff (randomised up to twice its base) and Retry-After.
 */
export function longestAgentCallMs(timeoutMs: number, policy: RetryPolicy, maxRetryAfterMs: number): number {
  let total = (policy.retries + 1) * timeoutMs;
  for (let retry = 0; retry < policy.retries; retry++) {
    total += Math.min(2 * policy.minTimeoutMs * RETRY_FACTOR ** retry, policy.maxTimeoutMs) + maxRetryAfterMs;
  }
  return total;
}

/**
 * Every lease, from the agent API time-out (`DOCS_AGENT_API_TIMEOUT_MS`) and the fixed Slack call
 * time-out and retry policies: a claim lasts as long as the work it guards, whatever that is.
 */
export function leasesFor(agentTimeoutMs: number): Leases {
  return {
    agentWrite: leaseFor(longestAgentCallMs(agentTimeoutMs, postPolicy, POST_MAX_RETRY_AFTER_MS)),
    agentRead: leaseFor(longestAgentCallMs(agentTimeoutMs, getPolicy, GET_MAX_RETRY_AFTER_MS)),
    delivery: leaseFor(SLACK_CALL_TIMEOUT_MS),
  };
}
