import type { AgentAnswer } from './endpoints.js';
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
} from './errors.js';
import { CONNECT_ERROR_CODES, errorCode } from './network-errors.js';
import { MAX_RESPONSE_BYTES } from './response-body.js';
import { type AgentJob, agentJobSchema, maskedJob } from './schema.js';

/*
 * What one attempt of an agent API request came to, read from how it ended: the job it answered,
 * or the typed failure the retry policy decides on. A POST that may have taken effect fails as
 * an unknown outcome, never as something safe to send again.
 */

/** One failed attempt, classified for the retry decision. */
export class AttemptFailure extends Error {
  constructor(
    readonly error: AgentApiError,
    /** Whether the request surely had no effect upstream. */
    readonly noEffect: boolean,
    readonly retryAfterMs: number | undefined,
  ) {
    super(error.message);
  }
}

type Method = 'GET' | 'POST';

/** A request that got no answer: a time-out, or a network error (surely no effect if it never connected). */
export function unreachedFailure(
  error: unknown,
  method: Method,
  path: string,
  timeoutMs: number,
): { answer: AgentAnswer; failure: AttemptFailure } {
  const code = errorCode(error);
  const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
  const noEffect = code !== undefined && CONNECT_ERROR_CODES.has(code);
  const what = timedOut ? `no answer within ${timeoutMs} ms` : `network error (${code ?? 'unknown'})`;
  const typed =
    method === 'POST' && !noEffect
      ? new AgentOutcomeUnknownError(`agent API ${method} ${path}: ${what}`, { cause: error })
      : new AgentUnavailableError(`agent API ${method} ${path}: ${what}`, { cause: error });
  return {
    answer: timedOut ? 'timeout' : 'network_error',
    failure: new AttemptFailure(typed, noEffect, undefined),
  };
}

/** An answer whose body broke off while it was read. */
export function cutOffFailure(error: unknown, method: Method, path: string): AttemptFailure {
  const typed =
    method === 'POST'
      ? new AgentOutcomeUnknownError(`agent API ${method} ${path}: answer cut off`, { cause: error })
      : new AgentUnavailableError(`agent API ${method} ${path}: answer cut off`, { cause: error });
  return new AttemptFailure(typed, false, undefined);
}

/** The job a successful answer's body holds, masked; an overlong or unreadable body fails the attempt. */
export function jobFromAnswer(
  text: string,
  truncated: boolean,
  where: string,
  status: number,
  redact: (text: string) => string,
): AgentJob {
  if (truncated) {
    throw new AttemptFailure(
      new AgentResponseTooLargeError(
        `${where} with a body over ${MAX_RESPONSE_BYTES} bytes; the rest was not read`,
        {
          status,
          limitBytes: MAX_RESPONSE_BYTES,
        },
      ),
      false,
      undefined,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new AttemptFailure(
      new AgentInvalidResponseError(`${where} with a body that is not JSON`, { status, cause: error }),
      false,
      undefined,
    );
  }
  const parsed = agentJobSchema.safeParse(json);
  if (!parsed.success) {
    throw new AttemptFailure(
      new AgentInvalidResponseError(`${where} with a body that is not an agent job`, { status }),
      false,
      undefined,
    );
  }
  return maskedJob(parsed.data, redact);
}

/** The failure an error status means; `detail` is the answer's body, clipped and masked. */
export function failureOfStatus(
  status: number,
  where: string,
  detail: string,
  method: Method,
  retryAfterMs: () => number | undefined,
  now: () => number,
): AttemptFailure {
  if (status === 429) {
    const wait = retryAfterMs();
    const resetAt = wait === undefined ? undefined : new Date(now() + wait);
    return new AttemptFailure(
      new AgentRateLimitedError(`${where}: ${detail || 'rate limited'}`, { resetAt }),
      true,
      wait,
    );
  }
  if (status === 401 || status === 403)
    return new AttemptFailure(
      new AgentUnauthorizedError(`${where}: ${detail || 'unauthorized'}`, { status }),
      true,
      undefined,
    );
  if (status === 404)
    return new AttemptFailure(
      new AgentNotFoundError(`${where}: ${detail || 'not found'}`, { status }),
      true,
      undefined,
    );
  if (status >= 400 && status < 500)
    return new AttemptFailure(
      new AgentBadRequestError(detail || `HTTP ${status}`, { status }),
      true,
      undefined,
    );
  // 503 means the service refused the request before doing anything; other 5xx may not.
  const noEffect = status === 503;
  const typed =
    method === 'POST' && !noEffect
      ? new AgentOutcomeUnknownError(`${where}: ${detail || 'server error'}`, { status })
      : new AgentUnavailableError(`${where}: ${detail || 'server error'}`, { status });
  return new AttemptFailure(typed, noEffect, retryAfterMs());
}
