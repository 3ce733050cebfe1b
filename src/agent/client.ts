import pRetry, { AbortError } from 'p-retry';
import { projectOfRecord } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import { type HttpAnswer, httpRequest, textOf } from '../util/http-request.js';
import {
  AttemptFailure,
  clipDetail,
  cutOffFailure,
  describeBody,
  failureOfStatus,
  jobFromAnswer,
  MAX_ERROR_BODY_BYTES,
  MAX_RESPONSE_BYTES,
  parseRetryAfter,
  unreachedFailure,
} from './attempt-failures.js';
import { AgentApiError, RETRY_FACTOR, type RetryPolicy, retryPolicies } from './errors.js';
import { type AgentAnswer, type AgentEndpoint, type AgentJob, isSafeJobId } from './schema.js';

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
  /** The logger's redaction, for answers that may be shown in Slack: an API or proxy may echo a secret. */
  redact: (text: string) => string;
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

/** Creates the agent API client. Nothing here reads the environment. */
export function createAgentClient(options: AgentClientOptions): AgentClient {
  const policies = { ...retryPolicies, ...options.policies };
  const now = options.now ?? Date.now;
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
    const ok = (status: number) => status === expected || (status >= 200 && status < 300);
    let answer: HttpAnswer;
    try {
      answer = await httpRequest(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(options.timeoutMs),
        // Never followed: a redirect would carry the prompt to an address nobody configured
        // (and past the https-only rule). It is answered like any unexpected status.
        redirect: 'manual',
        // A job is well under 10 KB: a longer body is cut off, so no answer can fill the memory.
        maxBytes: (status) => (ok(status) ? MAX_RESPONSE_BYTES : MAX_ERROR_BODY_BYTES),
      });
    } catch (error) {
      const unreached = unreachedFailure(error, method, path, options.timeoutMs);
      seen.answer = unreached.answer;
      throw unreached.failure;
    }

    const status = answer.status;
    seen.answer = status;
    let text: string;
    let truncated: boolean;
    try {
      const read = await answer.body;
      text = textOf(read.bytes);
      truncated = read.truncated;
    } catch (error) {
      throw cutOffFailure(error, method, path);
    }
    options.onAnswer?.(status);
    const where = `agent API ${method} ${path} answered ${status}`;
    if (ok(status)) return jobFromAnswer(text, truncated, where, status, options.redact);
    const retryAfterMs = () => parseRetryAfter({ get: answer.header }, now());
    throw failureOfStatus(status, where, describeBody(text, options.redact), method, retryAfterMs, now);
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
          factor: RETRY_FACTOR,
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
      throw error instanceof AttemptFailure ? error.error : error;
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

/**
 * One agent client per documentation project (`CHANNEL_PROJECTS`), made when a project is first
 * used: every client shares the same options (key, budget, hooks), only the project differs.
 */
export function agentsPerProject(
  options: Omit<AgentClientOptions, 'projectId'> & {
    /** The deployment's project, for jobs whose project is null. */
    defaultProject: string;
    /** Wraps each client as it is made (the composition root holds it behind the yield gate). */
    wrap: (client: AgentClient) => AgentClient;
  },
): (projectId: string | null) => AgentClient {
  const { defaultProject, wrap, ...shared } = options;
  const agents = new Map<string, AgentClient>();
  return (projectId) => {
    const id = projectOfRecord(projectId, defaultProject);
    let agent = agents.get(id);
    if (!agent) {
      agent = wrap(createAgentClient({ ...shared, projectId: id }));
      agents.set(id, agent);
    }
    return agent;
  };
}
