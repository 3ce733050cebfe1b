import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { AgentAnswer } from '../agent/schema.js';
import { type Config, servedProjects } from '../config/config.js';
import { answerPlain, type Route } from '../http/front-server.js';
import { type MetricsHooks, noMetrics } from '../jobs/metrics-hooks.js';
import type { Logger } from '../logging/logger.js';
import { FEEDBACK_VALUES } from '../store/feedback.js';
import type { ReportsStore, RunOutcome, StoreLifecycle } from '../store/types.js';
import { registerStoreGauges, type StoreGaugesOptions } from './store-gauges.js';

/** Upper bounds of the agent API latency buckets, in seconds (its time-out defaults to 6 s). */
export const AGENT_LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 6, 10, 30];
/** Upper bounds of the time-to-merge buckets, in seconds: minutes to the two weeks a pull request is followed. */
export const MERGE_BUCKETS = [
  300,
  1_800,
  3_600,
  4 * 3_600,
  12 * 3_600,
  86_400,
  2 * 86_400,
  4 * 86_400,
  7 * 86_400,
  14 * 86_400,
];
/** Longest Slack error code kept as a label value; Slack's own codes are far shorter. */
const MAX_CODE_CHARS = 64;

/** Run outcomes as label values: the words an operator reads. */
const OUTCOME_LABELS: Record<RunOutcome, string> = {
  completed_pr: 'pull_request',
  completed_no_changes: 'no_changes',
  failed: 'failed',
  archived: 'archived',
  gone: 'gone',
  stopped_watching: 'stopped_watching',
};

export type MetricsOptions = Omit<StoreGaugesOptions, 'register'>;

export interface Metrics {
  /** What the parts of the app call as things happen. */
  hooks: MetricsHooks;
  /** The exposition text (Prometheus text format 0.0.4) and its content type. */
  render(): Promise<{ contentType: string; body: string }>;
}

/**
 * The app's metrics, in a registry of its own (never prom-client's global one: a test process
 * starts many apps). Counters and histograms count what this process did; the gauges of
 * {@link registerStoreGauges} show the deployment-wide figures of the shared store; the default
 * process metrics (`process_*`, `nodejs_*`, event-loop lag included) describe this process.
 */
export function createMetrics(options: MetricsOptions): Metrics {
  const register = new Registry();
  collectDefaultMetrics({ register });
  registerStoreGauges({ ...options, register });

  const instructions = new Counter({
    name: 'docs_agent_instructions_total',
    help: 'Instructions by surface (command, mention, shortcut, reply) and result (started, sent, refused, failed, unknown, not_recorded); reason says why one was refused or failed.',
    labelNames: ['surface', 'result', 'reason'],
    registers: [register],
  });
  const runsFinished = new Counter({
    name: 'docs_agent_runs_finished_total',
    help: 'Runs ended, by outcome (pull_request, no_changes, failed, archived, gone, stopped_watching).',
    labelNames: ['outcome'],
    registers: [register],
  });
  // Every outcome shows from the start, so rate() and alerts have a series before the first one.
  for (const outcome of Object.values(OUTCOME_LABELS)) runsFinished.inc({ outcome }, 0);
  const agentRequests = new Counter({
    name: 'docs_agent_agent_requests_total',
    help: 'Agent API requests (each attempt), by endpoint and status class (2xx, 4xx, 5xx, timeout, network_error).',
    labelNames: ['endpoint', 'status_class'],
    registers: [register],
  });
  const agentLatency = new Histogram({
    name: 'docs_agent_agent_request_duration_seconds',
    help: 'Time from sending an agent API request to having its whole answer (or giving up), in seconds.',
    labelNames: ['endpoint'],
    buckets: AGENT_LATENCY_BUCKETS,
    registers: [register],
  });
  const keyRefused = new Counter({
    name: 'docs_agent_agent_key_refused_total',
    help: 'Agent API answers 401 or 403: the admin key was refused (expired, revoked, IP allow-list). Renew DOCS_AGENT_API_KEY.',
    labelNames: ['endpoint'],
    registers: [register],
  });
  const slackErrors = new Counter({
    name: 'docs_agent_slack_api_errors_total',
    help: 'Failed Slack Web API calls (and response_url posts), by method and Slack error code.',
    labelNames: ['method', 'code'],
    registers: [register],
  });
  const givenUp = new Counter({
    name: 'docs_agent_outbox_given_up_total',
    help: 'Messages Slack refused for good, so they were never delivered.',
    registers: [register],
  });
  givenUp.inc(0);
  const feedback = feedbackCounters(register);
  const pullRequest = pullRequestMetrics(register);
  const clockOffset = new Gauge({
    name: 'docs_agent_clock_offset_seconds',
    help: "The store's clock minus this host's, measured at the last heartbeat, in seconds. Ownership of work is timed by the store's clock, so this is for the operator: a host clock far off is a time service to fix.",
    registers: [register],
  });

  const hooks: MetricsHooks = {
    instruction(surface, result, reason, count = 1) {
      instructions.inc({ surface, result, reason: reason ?? '' }, count);
    },
    runFinished(outcome) {
      runsFinished.inc({ outcome: OUTCOME_LABELS[outcome] ?? outcome });
    },
    agentRequest(endpoint, answer, seconds) {
      agentRequests.inc({ endpoint, status_class: statusClass(answer) });
      agentLatency.observe({ endpoint }, seconds);
      if (answer === 401 || answer === 403) keyRefused.inc({ endpoint });
    },
    slackError(method, code) {
      slackErrors.inc({ method, code: labelSafe(code) });
    },
    outboxGivenUp() {
      givenUp.inc();
    },
    feedback(value, withReason = false) {
      feedback.votes.inc({ value });
      if (withReason) feedback.reasons.inc();
    },
    pullRequest,
    clockOffset(seconds) {
      clockOffset.set(seconds);
    },
  };

  return {
    hooks,
    async render() {
      return { contentType: register.contentType, body: await register.metrics() };
    },
  };
}

/** Pull requests followed (`GITHUB_TOKEN`): counted by state, and their time to merge. */
function pullRequestMetrics(register: Registry): MetricsHooks['pullRequest'] {
  const pullRequests = new Counter({
    name: 'docs_agent_pull_requests_total',
    help: "Pull requests followed (GITHUB_TOKEN), by state: opened (found on a run's outcome), merged, closed (without merging).",
    labelNames: ['state'],
    registers: [register],
  });
  for (const state of ['opened', 'merged', 'closed']) pullRequests.inc({ state }, 0);
  const mergeTime = new Histogram({
    name: 'docs_agent_pull_request_merge_seconds',
    help: 'Time from a run opening a pull request (its outcome recorded) to the pull request being merged, in seconds.',
    buckets: MERGE_BUCKETS,
    registers: [register],
  });
  return (state, mergedAfterSeconds) => {
    pullRequests.inc({ state });
    if (mergedAfterSeconds !== undefined) mergeTime.observe(Math.max(0, mergedAfterSeconds));
  };
}

/** `2xx`, `4xx`… for an HTTP status; `timeout` or `network_error` when none came. */
export function statusClass(answer: AgentAnswer): string {
  return typeof answer === 'number' ? `${Math.floor(answer / 100)}xx` : answer;
}

/** A Slack error code fit for a label: Slack's own are snake_case; anything else is cut down to that. */
function labelSafe(code: string): string {
  return code.replace(/[^A-Za-z0-9_.]/g, '_').slice(0, MAX_CODE_CHARS) || 'unknown';
}

export interface MetricsRouteOptions {
  /** The bearer token scrapers must send (`METRICS_TOKEN`). */
  token: string;
  metrics: Pick<Metrics, 'render'>;
  logger: Logger;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * `GET /metrics`: the Prometheus text exposition, for requests carrying
 * `Authorization: Bearer <token>`. Anything else gets 401 with `WWW-Authenticate: Bearer`.
 * Tokens are compared as SHA-256 digests in constant time, so neither the time taken nor the
 * length of what was sent tells a guesser how close it came. Nothing a request sends is logged.
 */
export function metricsRoute({ token, metrics, logger }: MetricsRouteOptions): Route {
  const expected = digest(token);
  const authorized = (req: IncomingMessage) => {
    const presented = /^Bearer +([^\s]+) *$/i.exec(req.headers.authorization ?? '')?.[1];
    return presented !== undefined && timingSafeEqual(digest(presented), expected);
  };
  return {
    method: 'GET',
    path: '/metrics',
    async handle(req, res) {
      if (!authorized(req)) {
        logger.debug('metrics request without the right bearer token');
        res.setHeader('www-authenticate', 'Bearer realm="metrics"');
        return answerPlain(req, res, 401, 'unauthorized');
      }
      const { contentType, body } = await metrics.render();
      res.writeHead(200, {
        'content-type': contentType,
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-store',
      });
      res.end(body);
      req.resume();
    },
  };
}

/**
 * The metrics of one app start: with `METRICS_TOKEN` set, the hooks that count and the
 * `GET /metrics` route; without it, hooks that do nothing and no route (`/metrics` is a 404).
 */
export function setUpMetrics(
  config: Pick<Config, 'metricsToken' | 'agent' | 'channelProjects' | 'instanceTimeoutMs'>,
  store: ReportsStore & Pick<StoreLifecycle, 'shared'>,
  logger: Logger,
): { hooks: MetricsHooks; routes: Route[] } {
  if (config.metricsToken === undefined) return { hooks: noMetrics, routes: [] };
  const metrics = createMetrics({
    read: (usesSince, instanceTimeoutMs) => store.figures(usesSince, instanceTimeoutMs),
    shared: store.shared,
    projects: servedProjects(config),
    instanceTimeoutMs: config.instanceTimeoutMs,
    logger,
  });
  return { hooks: metrics.hooks, routes: [metricsRoute({ token: config.metricsToken, metrics, logger })] };
}

/** Feedback on outcome posts: the votes by value, and the thumbs-down that said what to fix. */
function feedbackCounters(register: Registry) {
  const votes = new Counter({
    name: 'docs_agent_feedback_total',
    help: 'Feedback on outcome posts (thumbs up or down), by value (positive, negative): each new or changed vote.',
    labelNames: ['value'],
    registers: [register],
  });
  for (const value of FEEDBACK_VALUES) votes.inc({ value }, 0);
  const reasons = new Counter({
    name: 'docs_agent_feedback_reasons_total',
    help: 'Thumbs-down that said what to fix (the text went to the job as a follow-up): each new or changed reason.',
    registers: [register],
  });
  reasons.inc(0);
  return { votes, reasons };
}
