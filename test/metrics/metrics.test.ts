import { afterEach, describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config/config.js';
import { createFrontServer, type FrontServer } from '../../src/http/front-server.js';
import { noMetrics } from '../../src/jobs/metrics-hooks.js';
import { createLogger } from '../../src/logging/logger.js';
import {
  AGENT_LATENCY_BUCKETS,
  createMetrics,
  metricsRoute,
  setUpMetrics,
  statusClass,
} from '../../src/metrics/metrics.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store, StoreFigures } from '../../src/store/types.js';
import { VALID_ENV } from '../helpers/config.js';
import { tempDatabase } from '../helpers/harness.js';
import { rawRequest } from '../helpers/http.js';
import { parseExposition } from '../helpers/prometheus.js';

const FIGURES: StoreFigures = {
  uses: [],
  activeJobs: 0,
  earliestPollAt: null,
  outboxBacklog: 0,
  oldestUndeliveredAt: null,
  liveInstances: 1,
};

function metrics() {
  const m = createMetrics({
    read: async () => FIGURES,
    shared: false,
    projects: ['proj_test'],
    instanceTimeoutMs: 30_000,
    logger: createLogger({ level: 'error', secrets: [], write: () => undefined }),
  });
  return { hooks: m.hooks, render: m.render, scrape: async () => parseExposition((await m.render()).body) };
}

describe('the app’s counters', () => {
  it('show every run outcome, feedback value and the given-up count at 0 before anything happened', async () => {
    const m = await metrics().scrape();
    const outcomes = m.samples.filter((s) => s.name === 'docs_agent_runs_finished_total');
    expect(outcomes.map((s) => s.labels.outcome).sort()).toEqual([
      'archived',
      'failed',
      'gone',
      'no_changes',
      'pull_request',
      'stopped_watching',
    ]);
    expect(outcomes.every((s) => s.value === 0)).toBe(true);
    expect(m.value('docs_agent_feedback_total', { value: 'positive' })).toBe(0);
    expect(m.value('docs_agent_feedback_total', { value: 'negative' })).toBe(0);
    expect(m.value('docs_agent_outbox_given_up_total')).toBe(0);
    // Process figures come along, and the families are typed.
    expect(m.families.get('docs_agent_instructions_total')?.type).toBe('counter');
    expect(m.families.get('docs_agent_agent_request_duration_seconds')?.type).toBe('histogram');
    expect(m.families.has('process_cpu_user_seconds_total')).toBe(true);
    expect(m.families.has('nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('count instructions by surface, result and reason, an absent reason as an empty label', async () => {
    const { hooks, scrape } = metrics();
    hooks.instruction('command', 'started');
    hooks.instruction('command', 'refused', 'rate');
    hooks.instruction('command', 'refused', 'rate', 2);
    const m = await scrape();
    expect(
      m.value('docs_agent_instructions_total', { surface: 'command', result: 'started', reason: '' }),
    ).toBe(1);
    expect(m.value('docs_agent_instructions_total', { result: 'refused', reason: 'rate' })).toBe(3);
  });

  it('count a refused admin key on 401 and 403 only, and time every attempt in the documented buckets', async () => {
    const { hooks, scrape } = metrics();
    hooks.agentRequest('create_job', 401, 0.04);
    hooks.agentRequest('create_job', 403, 0.3);
    hooks.agentRequest('create_job', 404, 0.3);
    hooks.agentRequest('create_job', 500, 7);
    hooks.agentRequest('create_job', 'network_error', 45);
    const m = await scrape();
    expect(m.value('docs_agent_agent_key_refused_total', { endpoint: 'create_job' })).toBe(2);
    expect(m.value('docs_agent_agent_requests_total', { status_class: '4xx' })).toBe(3);
    expect(m.value('docs_agent_agent_requests_total', { status_class: '5xx' })).toBe(1);
    expect(m.value('docs_agent_agent_requests_total', { status_class: 'network_error' })).toBe(1);
    const buckets = m.samples
      .filter((s) => s.name === 'docs_agent_agent_request_duration_seconds_bucket')
      .map((s) => s.labels.le);
    expect(buckets).toEqual([...AGENT_LATENCY_BUCKETS.map(String), '+Inf']);
    const bucket = (le: string) =>
      m.value('docs_agent_agent_request_duration_seconds_bucket', { endpoint: 'create_job', le });
    expect(bucket('0.05')).toBe(1);
    expect(bucket('0.5')).toBe(3);
    expect(bucket('10')).toBe(4);
    expect(bucket('30')).toBe(4);
    expect(bucket('+Inf')).toBe(5);
    expect(m.value('docs_agent_agent_request_duration_seconds_count')).toBe(5);
    expect(m.value('docs_agent_agent_request_duration_seconds_sum')).toBeCloseTo(52.64);
  });

  it('cut a Slack error code that is no code down to a label: 64 safe characters, never empty', async () => {
    const { hooks, scrape } = metrics();
    hooks.slackError('chat.postMessage', 'ratelimited');
    hooks.slackError('chat.postMessage', `${'x'.repeat(100)}}"\n`);
    hooks.slackError('chat.postMessage', '');
    hooks.slackError('chat.postMessage', 'http.500');
    const codes = (await scrape()).samples
      .filter((s) => s.name === 'docs_agent_slack_api_errors_total')
      .map((s) => s.labels.code);
    expect(codes).toEqual(['ratelimited', 'x'.repeat(64), 'unknown', 'http.500']);
  });

  it('count feedback votes by value', async () => {
    const { hooks, scrape } = metrics();
    hooks.feedback('positive');
    hooks.feedback('positive');
    hooks.feedback('negative');
    const m = await scrape();
    expect(m.value('docs_agent_feedback_total', { value: 'positive' })).toBe(2);
    expect(m.value('docs_agent_feedback_total', { value: 'negative' })).toBe(1);
    expect(m.value('docs_agent_feedback_reasons_total', {})).toBe(0);
    hooks.feedback('negative', true);
    const after = await scrape();
    expect(after.value('docs_agent_feedback_total', { value: 'negative' })).toBe(2);
    expect(after.value('docs_agent_feedback_reasons_total', {})).toBe(1);
  });

  it('render in the Prometheus text format', async () => {
    const { contentType } = await metrics().render();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });
});

describe('status classes', () => {
  it('name an HTTP status by its hundreds, and pass a time-out or network error through', () => {
    expect(statusClass(200)).toBe('2xx');
    expect(statusClass(429)).toBe('4xx');
    expect(statusClass(599)).toBe('5xx');
    expect(statusClass('timeout')).toBe('timeout');
    expect(statusClass('network_error')).toBe('network_error');
  });
});

const TOKEN = 'metrics-test-token-0000';
const EXPOSITION = '# HELP docs_agent_example An example.\ndocs_agent_example 1\n';

describe('GET /metrics behind a bearer token', () => {
  let front: FrontServer | undefined;
  afterEach(async () => {
    await front?.stop();
    front = undefined;
  });

  /** Serves the route alone; records each render and every log line (at debug). */
  async function serve() {
    const lines: string[] = [];
    let renders = 0;
    const logger = createLogger({ level: 'debug', secrets: [], write: (l) => lines.push(l) });
    const route = metricsRoute({
      token: TOKEN,
      logger,
      metrics: {
        async render() {
          renders++;
          return { contentType: 'text/plain; version=0.0.4; charset=utf-8', body: EXPOSITION };
        },
      },
    });
    front = createFrontServer([route], logger);
    const port = await front.listen(0);
    const get = async (authorization?: string) => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`, {
        headers: authorization === undefined ? {} : { authorization },
      });
      return { res, body: await res.text() };
    };
    return { get, port, lines, renders: () => renders };
  }

  it('serves the exposition to the right token, uncached, with its content type and length', async () => {
    const { get, renders } = await serve();
    for (const header of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `BEARER   ${TOKEN}  `]) {
      const { res, body } = await get(header);
      expect(res.status, header).toBe(200);
      expect(body).toBe(EXPOSITION);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(EXPOSITION)));
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    expect(renders()).toBe(3);
  });

  it('refuses anything else with a Bearer challenge, without computing the metrics or logging what was sent', async () => {
    const { get, port, lines, renders } = await serve();
    const wrong = [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Bearer ${TOKEN}0`,
      `Bearer ${TOKEN} ${TOKEN}`,
      `Bearer\t${TOKEN}`,
      `Token ${TOKEN}`,
      `${TOKEN}`,
      `Bearer ${TOKEN.toUpperCase()}`,
      'Bearer guess-not-a-real-token-9999',
    ];
    for (const header of wrong) {
      const { res, body } = await get(header);
      expect(res.status, String(header)).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(body).toBe('unauthorized');
    }
    // A query string carrying the token is no way in either.
    expect((await rawRequest(port, { method: 'GET', path: `/metrics?token=${TOKEN}` })).status).toBe(401);
    expect(renders()).toBe(0);
    expect(lines.length).toBeGreaterThan(0);
    const logged = lines.join('\n');
    expect(logged).not.toContain(TOKEN.slice(0, 12));
    expect(logged).not.toContain('guess-not-a-real-token');
  });
});

describe('metrics of one app start', () => {
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  const logger = createLogger({ level: 'error', secrets: [], write: () => undefined });

  it('without METRICS_TOKEN: hooks that count nothing and no route', () => {
    store = openSqliteStore(tempDatabase());
    const { hooks, routes } = setUpMetrics(readConfig(VALID_ENV), store, logger);
    expect(hooks).toBe(noMetrics);
    expect(routes).toEqual([]);
  });

  it('with METRICS_TOKEN: one GET /metrics route showing what the hooks counted and every served project', async () => {
    store = openSqliteStore(tempDatabase());
    const config = readConfig({ ...VALID_ENV, METRICS_TOKEN: TOKEN, CHANNEL_PROJECTS: 'C0SDK:proj_sdk' });
    const { hooks, routes } = setUpMetrics(config, store, logger);
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /metrics']);
    hooks.outboxGivenUp();
    hooks.feedback('negative');
    let body = '';

    const front = createFrontServer(routes, logger);
    const port = await front.listen(0);
    const get = (authorization: string) =>
      fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization } });
    try {
      expect((await get('Bearer not-the-metrics-token')).status).toBe(401);
      const res = await get(`Bearer ${TOKEN}`);
      expect(res.status).toBe(200);
      body = await res.text();
    } finally {
      await front.stop();
    }
    const m = parseExposition(body);
    expect(m.value('docs_agent_outbox_given_up_total')).toBe(1);
    expect(m.value('docs_agent_feedback_total', { value: 'negative' })).toBe(1);
    // The store is read at scrape time.
    expect(m.value('docs_agent_store_read_ok')).toBe(1);
    const projects = m.samples
      .filter((s) => s.name === 'docs_agent_agent_quota_used')
      .map((s) => s.labels.project);
    expect(projects).toEqual(['proj_test', 'proj_sdk']);
  });
});
