import pRetry, { AbortError } from 'p-retry';
import { createRedactor, type Logger } from '../logger.js';
import {
  type AgentApiError,
  AgentBadRequestError,
  AgentInvalidResponseError,
  AgentNotFoundError,
  AgentOutcomeUnknownError,
  AgentRateLimitedError,
  AgentUnauthorizedError,
  AgentUnavailableError,
} from './errors.js';
import { type RetryPolicy, retryPolicies } from './retry-policies.js';
import { type AgentJob, agentErrorSchema, agentJobSchema } from './schema.js';

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

/** Parses `Retry-After` (seconds or HTTP date) or a reset header into milliseconds from now. */
export function parseRetryAfter(headers: Headers, nowMs: number): number | undefined {
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

/** The API's own explanation, shortened; it may be shown to users, so secrets are masked. */
function describeBody(text: string, redact: (s: string) => string): string {
  try {
    const parsed = agentErrorSchema.safeParse(JSON.parse(text));
    if (parsed.success) return redact(parsed.data.error.slice(0, 300));
  } catch {
    // Not JSON: the API (or a proxy in front of it) answered in plain text.
  }
  return redact(text.replace(/\s+/g, ' ').trim().slice(0, 300));
}

/** Creates the agent API client. Nothing here reads the environment. */
export function createAgentClient(options: AgentClientOptions): AgentClient {
  const policies = { ...retryPolicies, ...options.policies };
  const now = options.now ?? Date.now;
  const redact = createRedactor([options.apiKey]);
  const base = `${options.baseUrl.replace(/\/+$/, '')}/v2/agent/${encodeURIComponent(options.projectId)}`;

  async function attempt(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    expected: number,
  ): Promise<AgentJob> {
    if (method === 'GET') await options.getBudget?.take();
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
      });
    } catch (error) {
      const code = errorCode(error);
      const timedOut =
        error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
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

    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      const typed =
        method === 'POST'
          ? new AgentOutcomeUnknownError(`agent API ${method} ${path}: answer cut off`, { cause: error })
          : new AgentUnavailableError(`agent API ${method} ${path}: answer cut off`, { cause: error });
      throw new AttemptFailure(typed, false, undefined);
    }
    options.onAnswer?.(response.status);
    const status = response.status;
    const where = `agent API ${method} ${path} answered ${status}`;

    if (status === expected || (status >= 200 && status < 300)) {
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
            return await attempt(method, path, body, expected);
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

  const jobPath = (jobId: string) => `/job/${encodeURIComponent(jobId)}`;

  return {
    createJob: (prompt) => withRetry(policies.post, 'POST', '/job', { prompt }, 201),
    sendMessage: (jobId, prompt) =>
      withRetry(policies.post, 'POST', `${jobPath(jobId)}/message`, { prompt }, 200),
    getJob: (jobId) => withRetry(policies.get, 'GET', jobPath(jobId), undefined, 200),
  };
}
