import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { PROJECT_ID } from '../helpers/agent-stand-in.js';
import { type Harness, useHarness } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { appMention, messageShortcut, viewSubmission } from '../helpers/payloads.js';
import { type Exposition, parseExposition } from '../helpers/prometheus.js';

const TOKEN = 'metrics-test-token-0000';

/** Every metric family docs/operations.md lists in its tables, which the endpoint must serve. */
const DOCUMENTED = [
  ...new Set(
    [
      ...readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8').matchAll(
        /^\| `((?:docs_agent|process|nodejs)_[a-z0-9_]+)`/gm,
      ),
    ].map((m) => m[1] as string),
  ),
];

const metricsUrl = (h: Harness) => `${h.base()}/metrics`;

/** Scrapes `/metrics` with the token; the answer never carries the token itself. */
async function scrape(h: Harness): Promise<Exposition> {
  const res = await fetch(metricsUrl(h), { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const body = await res.text();
  expect(body).not.toContain(TOKEN);
  return parseExposition(body);
}

/** Waits until the scraped `name{labels}` passes `check`; returns that scrape. */
async function scrapeUntil(
  h: Harness,
  what: string,
  name: string,
  labels: Record<string, string>,
  check: (value: number) => boolean,
): Promise<Exposition> {
  return waitFor(what, async () => {
    const found = await scrape(h);
    const value = found.value(name, labels);
    return value !== undefined && check(value) ? found : undefined;
  });
}

const instructions = (m: Exposition, labels: Record<string, string>) =>
  m.value('docs_agent_instructions_total', labels) ?? 0;

describe('GET /metrics behind METRICS_TOKEN', () => {
  const h = useHarness({ METRICS_TOKEN: TOKEN, ALLOWED_CHANNEL_IDS: 'C0GENERAL', MAX_PROMPT_CHARS: '200' });

  it('serves every documented family, the process figures and nothing undocumented of its own', async () => {
    expect(DOCUMENTED.length).toBeGreaterThanOrEqual(15);
    const m = await scrape(h);
    for (const name of DOCUMENTED) expect(m.families.has(name), `${name} is served`).toBe(true);
    const own = [...m.families.keys()].filter((name) => name.startsWith('docs_agent_'));
    expect(own.filter((name) => !DOCUMENTED.includes(name))).toEqual([]);
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_size_used_bytes',
    ])
      expect(m.value(name), name).toBeGreaterThanOrEqual(0);
    expect(m.value('docs_agent_store_read_ok')).toBe(1);
    expect(m.value('docs_agent_instances')).toBe(1);
    expect(m.value('docs_agent_agent_quota_limit')).toBe(100);
    expect(m.value('docs_agent_agent_quota_used', { project: PROJECT_ID })).toBe(0);
    expect(m.value('docs_agent_runs_finished_total', { outcome: 'pull_request' })).toBe(0);
  });

  it('answers 401 with a Bearer challenge to a missing, wrong or differently shaped token', async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer metrics-test-token-0001' },
      { authorization: 'Bearer short' },
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}` },
      { authorization: TOKEN },
    ];
    for (const headers of attempts) {
      const res = await fetch(metricsUrl(h), { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      const body = await res.text();
      expect(body).not.toContain('docs_agent_');
      expect(body).not.toContain(TOKEN);
    }
    // The scheme's name is case-insensitive.
    expect((await fetch(metricsUrl(h), { headers: { authorization: `bearer ${TOKEN}` } })).status).toBe(200);
    // Logs never carry the token, and a line that tried to would have it masked.
    h.app.logger.info('a line with the token in it', { value: TOKEN });
    expect(h.logs.join('\n')).not.toContain(TOKEN);
    expect(h.logs.at(-1)).toContain('[redacted]');
  });

  it('counts a command started, its agent calls and latency, the quota, active runs and the run’s outcome', async () => {
    const { jobId } = await h.startJob({ channel_id: 'C0GENERAL' });
    const m = await scrape(h);
    expect(instructions(m, { surface: 'command', result: 'started' })).toBe(1);
    expect(m.value('docs_agent_agent_requests_total', { endpoint: 'create_job', status_class: '2xx' })).toBe(
      1,
    );
    expect(m.value('docs_agent_agent_request_duration_seconds_count', { endpoint: 'create_job' })).toBe(1);
    expect(
      m.value('docs_agent_agent_request_duration_seconds_sum', { endpoint: 'create_job' }),
    ).toBeGreaterThan(0);
    expect(m.value('docs_agent_agent_quota_used', { project: PROJECT_ID })).toBe(1);
    expect(m.value('docs_agent_active_runs')).toBe(1);

    h.agent.complete(jobId, 'https://github.com/example/docs/pull/9');
    const done = await scrapeUntil(
      h,
      'outcome counted',
      'docs_agent_runs_finished_total',
      { outcome: 'pull_request' },
      (v) => v === 1,
    );
    expect(done.value('docs_agent_active_runs')).toBe(0);
    expect(
      done.value('docs_agent_agent_requests_total', { endpoint: 'get_job', status_class: '2xx' }),
    ).toBeGreaterThan(0);
  });

  it('counts a reply sent as a follow-up, a mention and a shortcut started', async () => {
    const { channel, threadTs } = await h.startJob({ channel_id: 'C0GENERAL' });
    await h.event({ channel, thread_ts: threadTs, text: 'Also cover async usage' });
    await scrapeUntil(
      h,
      'reply sent',
      'docs_agent_instructions_total',
      { surface: 'reply', result: 'sent' },
      (v) => v === 1,
    );

    await h.anyEvent(appMention({ text: '<@U0BOT> Document the retry policy' }));
    await scrapeUntil(
      h,
      'mention started',
      'docs_agent_instructions_total',
      { surface: 'mention', result: 'started' },
      (v) => v === 1,
    );

    const views = h.slack.views.length;
    await h.interact(messageShortcut({ ts: '1700000400.000100', text: 'How do I rotate a key?' }));
    const view = await waitFor('modal', () => h.slack.views[views]);
    await h.interact(viewSubmission(view, { instruction: 'Add a key rotation guide', channel: 'C0GENERAL' }));
    const m = await scrapeUntil(
      h,
      'shortcut started',
      'docs_agent_instructions_total',
      { surface: 'shortcut', result: 'started' },
      (v) => v === 1,
    );
    expect(
      m.value('docs_agent_agent_requests_total', { endpoint: 'send_message', status_class: '2xx' }),
    ).toBe(1);
    expect(m.value('docs_agent_agent_quota_used', { project: PROJECT_ID })).toBe(4);
  });

  it('counts refusals by reason, a refused admin key and a thread Slack would not start', async () => {
    await h.command({ channel_id: 'C0ELSEWHERE', text: 'Document this elsewhere' });
    await h.command({ channel_id: 'C0GENERAL', text: 'x'.repeat(201) });
    let m = await scrapeUntil(
      h,
      'channel refusal',
      'docs_agent_instructions_total',
      { reason: 'channel' },
      (v) => v === 1,
    );
    m = await scrapeUntil(
      h,
      'length refusal',
      'docs_agent_instructions_total',
      { surface: 'command', result: 'refused', reason: 'too_long' },
      (v) => v === 1,
    );
    expect(instructions(m, { result: 'refused' })).toBe(2);

    h.agent.fail('create', { status: 401 });
    await h.command({ channel_id: 'C0GENERAL', text: 'Document the key refusal' });
    m = await scrapeUntil(
      h,
      'agent failure',
      'docs_agent_instructions_total',
      { result: 'failed', reason: 'agent' },
      (v) => v === 1,
    );
    expect(m.value('docs_agent_agent_key_refused_total', { endpoint: 'create_job' })).toBe(1);
    expect(m.value('docs_agent_agent_requests_total', { endpoint: 'create_job', status_class: '4xx' })).toBe(
      1,
    );

    h.slack.failIf('chat.postMessage', (args) => String(args.text).includes('closed channel'), {
      error: 'not_in_channel',
    });
    await h.command({ channel_id: 'C0GENERAL', text: 'Document the closed channel' });
    m = await scrapeUntil(
      h,
      'Slack failure',
      'docs_agent_instructions_total',
      { result: 'failed', reason: 'slack' },
      (v) => v === 1,
    );
    expect(
      m.value('docs_agent_slack_api_errors_total', { method: 'chat.postMessage', code: 'not_in_channel' }),
    ).toBe(1);
    expect(instructions(m, { result: 'started' })).toBe(0);
  });

  it('shows the outbox backlog and its oldest age while Slack fails, and counts a message given up', async () => {
    const { jobId, threadTs } = await h.startJob({ channel_id: 'C0GENERAL' });
    // The status card's update goes out first.
    const before = await scrapeUntil(h, 'outbox empty', 'docs_agent_outbox_backlog', {}, (v) => v === 0);
    expect(before.value('docs_agent_outbox_oldest_age_seconds')).toBe(0);

    h.slack.failIf('chat.postMessage', (args) => args.thread_ts === threadTs, { status: 500 });
    h.agent.complete(jobId, null);
    await waitFor('outcome post refused', () => h.slack.callsTo('chat.postMessage').length >= 2);
    const waiting = await scrape(h);
    expect(waiting.value('docs_agent_outbox_backlog')).toBeGreaterThanOrEqual(1);
    expect(waiting.value('docs_agent_outbox_oldest_age_seconds')).toBeGreaterThan(0);
    expect(
      waiting.value('docs_agent_slack_api_errors_total', { method: 'chat.postMessage', code: 'http_500' }),
    ).toBe(1);
    expect(waiting.value('docs_agent_runs_finished_total', { outcome: 'no_changes' })).toBe(1);
    await waitFor('outcome delivered', () => h.slack.threadPosts(threadTs).length === 1);
    await scrapeUntil(h, 'backlog drained', 'docs_agent_outbox_backlog', {}, (v) => v === 0);

    const second = await h.startJob({ channel_id: 'C0GENERAL', text: 'Document the second flow' });
    h.slack.failIf('chat.postMessage', (args) => args.thread_ts === second.threadTs, {
      error: 'restricted_action',
    });
    h.agent.setStatus(second.jobId, 'failed');
    const m = await scrapeUntil(
      h,
      'message given up',
      'docs_agent_outbox_given_up_total',
      {},
      (v) => v === 1,
    );
    expect(m.value('docs_agent_runs_finished_total', { outcome: 'failed' })).toBe(1);
  });

  it('shows how overdue the most overdue poll is while a poll hangs', async () => {
    await h.startJob({ channel_id: 'C0GENERAL' });
    h.agent.fail('get', { delayMs: 1_300 });
    const polls = h.agent.requestsFor('get').length;
    await waitFor('the slow poll sent', () => h.agent.requestsFor('get').length > polls);
    await scrapeUntil(h, 'lag over half a second', 'docs_agent_poll_lag_seconds', {}, (v) => v > 0.5);
    expect(h.agent.requestsFor('get').length, 'still the one slow poll').toBe(polls + 1);
    await scrapeUntil(h, 'lag back down', 'docs_agent_poll_lag_seconds', {}, (v) => v < 0.5);
  });
});

describe('metrics when the store fails', () => {
  const faults = { insert: false, figures: false };
  const h = useHarness(
    { METRICS_TOKEN: TOKEN },
    {
      wrapStore: (store: Store) =>
        new Proxy(store, {
          get(target, key, receiver) {
            if (key === 'insertJob' && faults.insert) return () => Promise.reject(new Error('store down'));
            if (key === 'figures' && faults.figures) return () => Promise.reject(new Error('store down'));
            return Reflect.get(target, key, receiver);
          },
        }),
    },
  );

  it('counts an instruction it could not record', async () => {
    faults.insert = true;
    try {
      const res = await h.command({ text: 'Document the outage' });
      expect(await res.text()).toContain('could not record');
    } finally {
      faults.insert = false;
    }
    const m = await scrape(h);
    expect(instructions(m, { surface: 'command', result: 'not_recorded' })).toBe(1);
  });

  it('still serves the process figures, with the store figures NaN and store_read_ok 0', async () => {
    faults.figures = true;
    try {
      const m = await scrape(h);
      expect(m.value('docs_agent_store_read_ok')).toBe(0);
      expect(m.value('docs_agent_outbox_backlog')).toBeNaN();
      expect(m.value('docs_agent_agent_quota_used', { project: PROJECT_ID })).toBeNaN();
      expect(m.value('process_resident_memory_bytes')).toBeGreaterThan(0);
    } finally {
      faults.figures = false;
    }
    expect((await scrape(h)).value('docs_agent_store_read_ok')).toBe(1);
  });
});

describe('without METRICS_TOKEN', () => {
  const h = useHarness();

  it('has no metrics route at all', async () => {
    const res = await fetch(metricsUrl(h), { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('docs_agent_');
  });
});
