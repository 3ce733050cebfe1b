import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { AGENT_LATENCY_BUCKETS, createMetrics, statusClass } from '../../src/metrics/metrics.js';
import type { StoreFigures } from '../../src/store/types.js';
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
