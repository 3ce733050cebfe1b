import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { createMetrics, type MetricsOptions, statusClass } from '../../src/metrics/metrics.js';
import type { StoreFigures } from '../../src/store/types.js';
import { parseExposition } from '../helpers/prometheus.js';

const NOW = 1_700_000_000_000;

const figures = (overrides: Partial<StoreFigures> = {}): StoreFigures => ({
  uses: [
    { projectId: null, count: 3 },
    { projectId: 'api-docs', count: 97 },
  ],
  activeJobs: 2,
  earliestPollAt: NOW - 4_500,
  outboxBacklog: 5,
  oldestUndeliveredAt: NOW - 90_000,
  liveInstances: 3,
  ...overrides,
});

function metricsWith(read: MetricsOptions['read'], overrides: Partial<MetricsOptions> = {}) {
  const lines: string[] = [];
  const metrics = createMetrics({
    read,
    shared: true,
    projects: ['docs-site', 'api-docs', 'sdk-docs'],
    instanceTimeoutMs: 30_000,
    logger: createLogger({ level: 'debug', secrets: [], write: (line) => lines.push(line) }),
    timeoutMs: 100,
    now: () => NOW,
    ...overrides,
  });
  return { metrics, lines, scrape: async () => parseExposition((await metrics.render()).body) };
}

describe('store figures at scrape time', () => {
  it('reads the store once per scrape, over the last hour and the instance time-out', async () => {
    const reads: [number, number][] = [];
    const { scrape } = metricsWith(async (usesSince, liveSince) => {
      reads.push([usesSince, liveSince]);
      return figures();
    });
    const m = await scrape();
    expect(reads).toEqual([[NOW - 3_600_000, 30_000]]);
    expect(m.value('docs_agent_agent_quota_used', { project: 'docs-site' })).toBe(3);
    expect(m.value('docs_agent_agent_quota_used', { project: 'api-docs' })).toBe(97);
    expect(m.value('docs_agent_agent_quota_used', { project: 'sdk-docs' })).toBe(0);
    expect(m.value('docs_agent_poll_lag_seconds')).toBe(4.5);
    expect(m.value('docs_agent_active_runs')).toBe(2);
    expect(m.value('docs_agent_outbox_backlog')).toBe(5);
    expect(m.value('docs_agent_outbox_oldest_age_seconds')).toBe(90);
    expect(m.value('docs_agent_instances')).toBe(3);
    expect(m.value('docs_agent_store_read_ok')).toBe(1);
    await scrape();
    expect(reads).toHaveLength(2);
  });

  it('shows no lag and no age when nothing is due or waiting, and one instance on a store of its own', async () => {
    const { scrape } = metricsWith(
      async () =>
        figures({
          earliestPollAt: NOW + 5_000,
          oldestUndeliveredAt: null,
          outboxBacklog: 0,
          liveInstances: 4,
        }),
      { shared: false },
    );
    const m = await scrape();
    expect(m.value('docs_agent_poll_lag_seconds')).toBe(0);
    expect(m.value('docs_agent_outbox_oldest_age_seconds')).toBe(0);
    expect(m.value('docs_agent_instances')).toBe(1);
  });

  it('answers within its time-out when the store hangs, with NaN figures and store_read_ok 0', async () => {
    const { scrape, lines } = metricsWith(() => new Promise<StoreFigures>(() => {}));
    const started = Date.now();
    const m = await scrape();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(m.value('docs_agent_store_read_ok')).toBe(0);
    expect(m.value('docs_agent_active_runs')).toBeNaN();
    expect(m.value('docs_agent_agent_quota_used', { project: 'docs-site' })).toBeNaN();
    // The process figures are still there.
    expect(m.value('process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(lines.some((l) => l.includes('did not answer in time'))).toBe(true);
  });
});

describe('counters', () => {
  it('labels runs by outcome words, agent requests by status class, and keeps Slack codes label-safe', async () => {
    const { metrics, scrape } = metricsWith(async () => figures());
    metrics.hooks.runFinished('completed_no_changes');
    metrics.hooks.agentRequest('get_job', 403, 0.2);
    metrics.hooks.agentRequest('get_job', 'timeout', 6);
    metrics.hooks.slackError('chat.update', 'weird code\n"quoted"');
    metrics.hooks.instruction('reply', 'sent', undefined, 3);
    const m = await scrape();
    expect(m.value('docs_agent_runs_finished_total', { outcome: 'no_changes' })).toBe(1);
    expect(m.value('docs_agent_runs_finished_total', { outcome: 'stopped_watching' })).toBe(0);
    expect(m.value('docs_agent_agent_requests_total', { status_class: '4xx' })).toBe(1);
    expect(m.value('docs_agent_agent_requests_total', { status_class: 'timeout' })).toBe(1);
    expect(m.value('docs_agent_agent_key_refused_total', { endpoint: 'get_job' })).toBe(1);
    expect(
      m.value('docs_agent_agent_request_duration_seconds_bucket', { endpoint: 'get_job', le: '0.25' }),
    ).toBe(1);
    expect(m.value('docs_agent_slack_api_errors_total', { code: 'weird_code__quoted_' })).toBe(1);
    expect(m.value('docs_agent_instructions_total', { surface: 'reply', result: 'sent' })).toBe(3);
    expect(statusClass(503)).toBe('5xx');
  });

  it('keeps each app’s metrics apart (a registry per start)', async () => {
    const one = metricsWith(async () => figures());
    const two = metricsWith(async () => figures());
    one.metrics.hooks.outboxGivenUp();
    expect((await one.scrape()).value('docs_agent_outbox_given_up_total')).toBe(1);
    expect((await two.scrape()).value('docs_agent_outbox_given_up_total')).toBe(0);
  });
});

describe('the clock offset gauge', () => {
  it('shows the offset from the store’s clock measured at the last heartbeat, in seconds', async () => {
    const { metrics, scrape } = metricsWith(async () => figures());
    metrics.hooks.clockOffset(-2.25);
    metrics.hooks.clockOffset(1.5);
    expect((await scrape()).value('docs_agent_clock_offset_seconds')).toBe(1.5);
  });
});
