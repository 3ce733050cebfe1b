/**
 * Typed errors of the agent API client. Callers branch on them with `instanceof`; messages
 * are safe to log (no configured secret is left in them) but are written for operators, not users.
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
