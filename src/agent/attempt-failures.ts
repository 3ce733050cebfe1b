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
import {
  type AgentAnswer,
  type AgentJob,
  agentErrorSchema,
  agentJobSchema,
  MAX_ERROR_DETAIL_CHARS,
  maskedJob,
} from './schema.js';

/*
 * What one attempt of an agent API request came to, read from how it ended: the job it answered,
 * or the typed failure the retry policy decides on. A POST that may have taken effect fails as
 * an unknown outcome, never as something safe to send again.
 */

/** Errors raised before the request reached the API: it surely had no effect there. */
export const CONNECT_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** The first `code` found on an error or its causes (fetch wraps the socket error). */
export function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as Error & { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = current.cause;
  }
  return undefined;
}

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

/** Longest wait a rate-limit answer may ask for: the agent API's limits are hourly. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** How long a rate-limit answer asks to wait, in milliseconds, at most {@link MAX_RETRY_AFTER_MS}. */
export function parseRetryAfter(headers: Pick<Headers, 'get'>, nowMs: number): number | undefined {
  const ms = retryAfterOf(headers, nowMs);
  return ms === undefined || Number.isNaN(ms) ? undefined : Math.min(ms, MAX_RETRY_AFTER_MS);
}

/** Parses `Retry-After` (seconds or HTTP date) or a reset header into milliseconds from now. */
function retryAfterOf(headers: Pick<Headers, 'get'>, nowMs: number): number | undefined {
  const retryAfter = headers.get('retry-after');
  if (retryAfter) {
    const trimmed = retryAfter.trim();
    if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
    // Only an HTTP date is valid otherwise; a negative number is not a date.
    const date = /^-?[\d.]+$/.test(trimmed) ? Number.NaN : Date.parse(trimmed);
    if (!Number.isNaN(date)) return Math.max(0, date - nowMs);
  }
  const reset = headers.get('x-ratelimit-reset') ?? headers.get('ratelimit-reset');
  if (reset) {
    const value = Number(reset);
    if (Number.isFinite(value) && value >= 0) {
      // Large values are epoch seconds, small ones a delta in seconds.
      return value > 1e9 ? Math.max(0, value * 1000 - nowMs) : Math.round(value * 1000);
    }
  }
  return undefined;
}

/**
 * Most bytes read of a successful answer (1 MiB). An agent job is well under 10 KB; a longer
 * body is cut off here, the request aborted, and the answer treated as malformed
 * ({@link AgentResponseTooLargeError}), so no answer can fill the process's memory.
 */
export const MAX_RESPONSE_BYTES = 1_048_576;
/**
 * Most bytes read of an error answer (64 KiB): `{"error": string}` is a sentence. The rest is
 * not read; only the first {@link MAX_ERROR_DETAIL_CHARS} characters of it are ever shown.
 */
export const MAX_ERROR_BODY_BYTES = 65_536;

/** One line of at most `max` characters: whitespace and control characters collapsed, never half a surrogate pair. */
export function clipDetail(text: string, max = MAX_ERROR_DETAIL_CHARS): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const line = text.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  if (line.length <= max) return line;
  let cut = max - 1;
  const code = line.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return `${line.slice(0, cut).trimEnd()}…`;
}

/**
 * The API's own explanation, at most {@link MAX_ERROR_DETAIL_CHARS} characters on one line; it
 * may be shown to users, so secrets are masked (before cutting, so no cut can split a secret out
 * of the mask's reach).
 */
export function describeBody(text: string, redact: (s: string) => string): string {
  try {
    const parsed = agentErrorSchema.safeParse(JSON.parse(text));
    if (parsed.success) return clipDetail(redact(parsed.data.error));
  } catch {
    // Not JSON (or cut off): the API, or a proxy in front of it, answered in plain text.
  }
  return clipDetail(redact(text));
}
