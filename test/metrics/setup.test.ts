import { afterEach, describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config/config.js';
import { createFrontServer } from '../../src/http/front-server.js';
import { noMetrics } from '../../src/jobs/metrics-hooks.js';
import { createLogger } from '../../src/logging/logger.js';
import { setUpMetrics } from '../../src/metrics/setup.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import { VALID_ENV } from '../helpers/config.js';
import { tempDatabase } from '../helpers/harness.js';
import { parseExposition } from '../helpers/prometheus.js';

const TOKEN = 'metrics-test-token-0000';

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
