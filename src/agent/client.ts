import pRetry, { AbortError } from 'p-retry';
import { createRedactor, type Logger } from '../logger.js';
import type { AgentAnswer, AgentEndpoint } from '../metrics/hooks.js';
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
} from './errors.js';
import { type RetryPolicy, retryPolicies } from './retry-policies.js';
import {
  type AgentJob,
  agentErrorSchema,
  agentJobSchema,
  isSafeJobId,
  MAX_ERROR_DETAIL_CHARS,
} from './schema.js';

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

/** The three operations of the agent API (Mintlify Admin API v2) the bot uses. */
export interface AgentClient {
  /** `POST /v2/agent/{projectId}/job`. Never retried once it may have taken effect. */
  createJob(prompt: string): Promise<AgentJob>;
  /** `POST /v2/agent/{projectId}/job/{id}/message`. Never retried once it may have taken effect. */
  sendMessage(jobId: string, prompt: string): Promise<AgentJob>;
  /** `GET /v2/agent/{projectId}/job/{id}`, retried with backoff on network errors, 5xx and 429. */
  getJob(jobId: string): Promise<AgentJob>;
}

export interface AgentClientOptions {
  baseUrl: string;
  apiKey: string;
  projectId: string;
  /** Per-request time-out in milliseconds. */
  timeoutMs: number;
  logger: Logger;
  /** Overrides for the retry policies (tests shorten the delays). */
  policies?: Partial<typeof retryPolicies>;
  /**
   * Paces every GET attempt, retries included, so polling never exceeds the configured rate.
   * Creates and follow-ups are not paced: they are people's instructions, few and urgent.
   */
  getBudget?: { take(): Promise<void> };
  /** Called after every request the API answered, for health reporting. */
  onAnswer?: (status: number) => void;
  /**
   * Called once per request (each attempt, retries included) when it ended: with the HTTP status
   * answered, or `timeout`/`network_error`, and the seconds from sending it to having the whole
   * answer (waiting for the request budget not included). For metrics.
   */
  onRequest?: (endpoint: AgentEndpoint, answer: AgentAnswer, seconds: number) => void;
  now?: () => number;
}

/** One failed attempt, classified for the retry decision. */
class AttemptFailure extends Error {
  constructor(
    readonly error: AgentApiError,
    /** Whether the request surely had no effect upstream. */
    readonly noEffect: boolean,
    readonly retryAfterMs: number | undefined,
  ) {
    super(error.message);
  }
}

const CONNECT_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as Error & { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = current.cause;
  }
  return undefined;
}

/** Longest wait a rate-limit answer may ask for: the agent API's limits are hourly. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** How long a rate-limit answer asks to wait, in milliseconds, at most {@link MAX_RETRY_AFTER_MS}. */
export function parseRetryAfter(headers: Headers, nowMs: number): number | undefined {
  const ms = retryAfterOf(headers, nowMs);
  return ms === undefined || Number.isNaN(ms) ? undefined : Math.min(ms, MAX_RETRY_AFTER_MS);
}

/** Parses `Retry-After` (seconds or HTTP date) or a reset header into milliseconds from now. */
function retryAfterOf(headers: Headers, nowMs: number): number | undefined {
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
 * Reads at most `limit` bytes of a body, as a stream: once more arrive, reading stops and the
 * body is cancelled (which aborts the request), so a huge or endless body is never held whole.
 * A `Content-Length` over the limit is refused before reading anything.
 */
export async function readBodyCapped(
  response: Response,
  limit: number,
): Promise<{ text: string; truncated: boolean }> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  const body = response.body;
  if (!body) return { text: '', truncated: false };
  if (declared > limit) {
    await body.cancel().catch(() => undefined);
    return { text: '', truncated: true };
  }
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (total + value.byteLength > limit) {
      chunks.push(value.subarray(0, limit - total));
      total = limit;
      await reader.cancel().catch(() => undefined);
      return { text: decode(chunks, total), truncated: true };
    }
    chunks.push(value);
    total += value.byteLength;
  }
  return { text: decode(chunks, total), truncated: false };
}

function decode(chunks: Uint8Array[], total: number): string {
  const all = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(all);
}

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
function describeBody(text: string, redact: (s: string) => string): string {
  try {
    const parsed = agentErrorSchema.safeParse(JSON.parse(text));
    if (parsed.success) return clipDetail(redact(parsed.data.error));
  } catch {
    // Not JSON (or cut off): the API, or a proxy in front of it, answered in plain text.
  }
  return clipDetail(redact(text));
}

/** Creates the agent API client. Nothing here reads the environment. */
export function createAgentClient(options: AgentClientOptions): AgentClient {
  const policies = { ...retryPolicies, ...options.policies };
  const now = options.now ?? Date.now;
  const redact = createRedactor([options.apiKey]);
  const base = `${options.baseUrl.replace(/\/+$/, '')}/v2/agent/${encodeURIComponent(options.projectId)}`;

  /** One request, timed and reported to {@link AgentClientOptions.onRequest}. */
  async function timedAttempt(
    endpoint: AgentEndpoint,
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    expected: number,
  ): Promise<AgentJob> {
    if (method === 'GET') await options.getBudget?.take();
    const started = performance.now();
    const seen: { answer: AgentAnswer } = { answer: 'network_error' };
    try {
      return await attempt(method, path, body, expected, seen);
    } finally {
      options.onRequest?.(endpoint, seen.answer, (performance.now() - started) / 1000);
    }
  }

  async function attempt(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    expected: number,
    seen: { answer: AgentAnswer },
  ): Promise<AgentJob> {
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs),
        // Never followed: a redirect would carry the prompt to an address nobody configured
        // (and past the https-only rule). It is answered like any unexpected status.
        redirect: 'manual',
      });
    } catch (error) {
      const code = errorCode(error);
      const timedOut =
        error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      if (timedOut) seen.answer = 'timeout';
      const noEffect = code !== undefined && CONNECT_ERROR_CODES.has(code);
      const what = timedOut
        ? `no answer within ${options.timeoutMs} ms`
        : `network error (${code ?? 'unknown'})`;
      const typed =
        method === 'POST' && !noEffect
          ? new AgentOutcomeUnknownError(`agent API ${method} ${path}: ${what}`, { cause: error })
          : new AgentUnavailableError(`agent API ${method} ${path}: ${what}`, { cause: error });
      throw new AttemptFailure(typed, noEffect, undefined);
    }

    const status = response.status;
    seen.answer = status;
    const ok = status === expected || (status >= 200 && status < 300);
    let text: string;
    let truncated: boolean;
    try {
      ({ text, truncated } = await readBodyCapped(response, ok ? MAX_RESPONSE_BYTES : MAX_ERROR_BODY_BYTES));
    } catch (error) {
      const typed =
        method === 'POST'
          ? new AgentOutcomeUnknownError(`agent API ${method} ${path}: answer cut off`, { cause: error })
          : new AgentUnavailableError(`agent API ${method} ${path}: answer cut off`, { cause: error });
      throw new AttemptFailure(typed, false, undefined);
    }
    options.onAnswer?.(status);
    const where = `agent API ${method} ${path} answered ${status}`;

    if (ok) {
      if (truncated) {
        throw new AttemptFailure(
          new AgentResponseTooLargeError(
            `${where} with a body over ${MAX_RESPONSE_BYTES} bytes; the rest was not read`,
            { status, limitBytes: MAX_RESPONSE_BYTES },
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
      return parsed.data;
    }

    const detail = describeBody(text, redact);
    if (status === 429) {
      const retryAfterMs = parseRetryAfter(response.headers, now());
      const resetAt = retryAfterMs === undefined ? undefined : new Date(now() + retryAfterMs);
      throw new AttemptFailure(
        new AgentRateLimitedError(`${where}: ${detail || 'rate limited'}`, { resetAt }),
        true,
        retryAfterMs,
      );
    }
    if (status === 401 || status === 403) {
      throw new AttemptFailure(
        new AgentUnauthorizedError(`${where}: ${detail || 'unauthorized'}`, { status }),
        true,
        undefined,
      );
    }
    if (status === 404) {
      throw new AttemptFailure(
        new AgentNotFoundError(`${where}: ${detail || 'not found'}`, { status }),
        true,
        undefined,
      );
    }
    if (status >= 400 && status < 500) {
      throw new AttemptFailure(
        new AgentBadRequestError(detail || `HTTP ${status}`, { status }),
        true,
        undefined,
      );
    }
    // 503 means the service refused the request before doing anything; other 5xx may not.
    const noEffect = status === 503;
    const typed =
      method === 'POST' && !noEffect
        ? new AgentOutcomeUnknownError(`${where}: ${detail || 'server error'}`, { status })
        : new AgentUnavailableError(`${where}: ${detail || 'server error'}`, { status });
    throw new AttemptFailure(typed, noEffect, parseRetryAfter(response.headers, now()));
  }

  async function withRetry(
    endpoint: AgentEndpoint,
    policy: RetryPolicy,
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    expected: number,
  ): Promise<AgentJob> {
    try {
      return await pRetry(
        async () => {
          try {
            return await timedAttempt(endpoint, method, path, body, expected);
          } catch (error) {
            if (
              error instanceof AttemptFailure &&
              policy.shouldRetry(error.error, error.noEffect, error.retryAfterMs)
            ) {
              throw error;
            }
            throw new AbortError(error as Error);
          }
        },
        {
          retries: policy.retries,
          minTimeout: policy.minTimeoutMs,
          maxTimeout: policy.maxTimeoutMs,
          factor: 2,
          randomize: true,
          onFailedAttempt: async ({ error, retriesLeft }) => {
            if (!(error instanceof AttemptFailure) || retriesLeft === 0) return;
            options.logger.debug('agent API request will be retried', {
              method,
              path,
              error: error.error,
              retriesLeft,
            });
            // Honour a short Retry-After on top of the backoff.
            if (error.retryAfterMs !== undefined && error.retryAfterMs > 0) {
              await new Promise((resolve) => setTimeout(resolve, error.retryAfterMs));
            }
          },
        },
      );
    } catch (error) {
      if (error instanceof AttemptFailure) throw error.error;
      throw error;
    }
  }

  /**
   * The path of a job. The id is encoded, and one that could still change the path once
   * encoded (`.` or `..`, a control character, an overlong id) is refused before any request:
   * every id comes from an answer the schema checked, so this only guards older rows.
   */
  const jobPath = (jobId: string) => {
    if (!isSafeJobId(jobId)) {
      throw new AgentApiError(
        `agent API: job id ${JSON.stringify(clipDetail(jobId, 80))} cannot be used in a request path`,
      );
    }
    return `/job/${encodeURIComponent(jobId)}`;
  };

  return {
    createJob: (prompt) => withRetry('create_job', policies.post, 'POST', '/job', { prompt }, 201),
    sendMessage: async (jobId, prompt) =>
      withRetry('send_message', policies.post, 'POST', `${jobPath(jobId)}/message`, { prompt }, 200),
    getJob: async (jobId) => withRetry('get_job', policies.get, 'GET', jobPath(jobId), undefined, 200),
  };
}
