/**
 * Typed errors of the agent API client, and which of them are tried again (the retry policies).
 * Callers branch on them with `instanceof`; messages are safe to log (no configured secret is left
 * in them) but are written for operators, not users.
 */
export class AgentApiError extends Error {
  override name = 'AgentApiError';
  /** HTTP status, when the API answered. */
  readonly status: number | undefined;

  constructor(message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.status = options.status;
  }
}

/** 429: the project's hourly agent quota (or a short-term limit) is used up. */
export class AgentRateLimitedError extends AgentApiError {
  override name = 'AgentRateLimitedError';
  /** When the API says the limit resets, if it said. */
  readonly resetAt: Date | undefined;

  constructor(message: string, options: { resetAt?: Date; cause?: unknown } = {}) {
    super(message, { status: 429, cause: options.cause });
    this.resetAt = options.resetAt;
  }
}

/** 401 or 403: the admin key is expired, wrong, lacks scope, or the IP is not allowed. */
export class AgentUnauthorizedError extends AgentApiError {
  override name = 'AgentUnauthorizedError';
}

/** 404: the job (or project) does not exist. */
export class AgentNotFoundError extends AgentApiError {
  override name = 'AgentNotFoundError';
}

/** 400 (or another 4xx): the API refused the request as invalid; `detail` is its explanation. */
export class AgentBadRequestError extends AgentApiError {
  override name = 'AgentBadRequestError';
  readonly detail: string;

  constructor(detail: string, options: { status?: number; cause?: unknown } = {}) {
    super(`agent API rejected the request: ${detail}`, {
      status: options.status ?? 400,
      cause: options.cause,
    });
    this.detail = detail;
  }
}

/** 5xx, time-out or network failure where the request surely had no effect (or was a GET). */
export class AgentUnavailableError extends AgentApiError {
  override name = 'AgentUnavailableError';
}

/**
 * A POST whose effect is unknown: it was sent, and no answer says whether it took effect
 * (time-out, connection reset, a 5xx other than 503). It is never retried.
 */
export class AgentOutcomeUnknownError extends AgentApiError {
  override name = 'AgentOutcomeUnknownError';
}

/** The API answered 2xx with a body that is not an agent job. */
export class AgentInvalidResponseError extends AgentApiError {
  override name = 'AgentInvalidResponseError';
}

/**
 * The API answered 2xx with a body longer than the client reads ({@link MAX_RESPONSE_BYTES} in
 * `client.ts`): the request was aborted there. Handled exactly like a malformed answer, which it
 * is: not retried in place, and for a POST the outcome is unknown.
 */
export class AgentResponseTooLargeError extends AgentInvalidResponseError {
  override name = 'AgentResponseTooLargeError';
  /** The most bytes the client reads of an answer. */
  readonly limitBytes: number;

  constructor(message: string, options: { status?: number; limitBytes: number; cause?: unknown }) {
    super(message, { status: options.status, cause: options.cause });
    this.limitBytes = options.limitBytes;
  }
}

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
