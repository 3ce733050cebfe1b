import { existsSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildFoundation, buildSlackSide, buildWork, type Foundation } from '../src/app-build.js';
import { buildReceiver } from '../src/app-receiver.js';
import { type Config, readConfig } from '../src/config/config.js';
import { createLogger } from '../src/logging/logger.js';
import { createTaskTracker } from '../src/util/tasks.js';
import { type AgentStandIn, startAgentStandIn } from './helpers/agent-stand-in.js';
import { tempDatabase, testEnv } from './helpers/harness.js';
import { rawRequest, waitFor } from './helpers/http.js';
import { slashCommand } from './helpers/payloads.js';
import { postSigned } from './helpers/signing.js';
import { BOT_TOKEN, BOT_USER_ID, type SlackStandIn, startSlackStandIn } from './helpers/slack-stand-in.js';

describe('the build sections of the composition root', () => {
  let slack: SlackStandIn;
  let agent: AgentStandIn;
  let config: Config;
  let databasePath: string;
  /** One foundation for the file: it opens the store, the slowest part to build. */
  let base: Foundation;
  const cleanups: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    slack = await startSlackStandIn();
    agent = await startAgentStandIn();
    databasePath = tempDatabase();
    config = readConfig(
      testEnv(slack, agent, databasePath, { FOLLOW_UP_MODE: 'all', PR_LINK_HOSTS: 'git.example.com' }),
    );
    const logger = createLogger({ level: 'debug', secrets: [], write: () => undefined });
    base = await buildFoundation(config, { logger });
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    await base.store.close();
    await slack.close();
    await agent.close();
  });

  it('derive the settings once: the store at DATABASE_PATH, redaction of the configured secrets, render hints', async () => {
    expect(existsSync(databasePath)).toBe(true);
    expect(base.config).toBe(config);
    expect(base.redact(`token ${BOT_TOKEN} and key mint_test`)).not.toContain(BOT_TOKEN);
    expect(base.hints).toEqual({
      mode: config.followUps.mode,
      asideMarker: config.followUps.asideMarker,
      prLinkHosts: config.prLinkHosts,
    });
    expect(base.hints.mode).toBe('all');
    expect(base.metrics.routes).toEqual([]);
    // Each start is an instance of its own.
    const again = await buildFoundation(config, { logger: base.logger, store: base.store });
    expect(again.store).toBe(base.store);
    expect(again.instanceId).not.toBe(base.instanceId);
  });

  it('give metrics a route only with METRICS_TOKEN', async () => {
    const withToken = readConfig(
      testEnv(slack, agent, databasePath, { METRICS_TOKEN: 'metrics-test-token-0000' }),
    );
    const metered = await buildFoundation(withToken, { logger: base.logger, store: base.store });
    expect(metered.metrics.routes.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /metrics']);
  });

  it('ask Slack who the bot is once, at build, and start no work until started', async () => {
    const callsBefore = slack.calls.length;
    const side = buildSlackSide(base, { liveCount: () => 1 });
    await waitFor('auth.test asked', () => slack.calls.length === callsBefore + 1);
    expect((await side.identity.get())?.botUserId).toBe(BOT_USER_ID);
    const tasks = createTaskTracker(base.logger, { gate: base.gate });
    // A post waiting in the outbox: a started outbox would send it at once.
    await base.store.enqueue(
      [
        {
          jobId: null,
          dedupeKey: 'built-not-started',
          payload: {
            type: 'post',
            channel: 'C0DOCS',
            threadTs: '1700000000.000100',
            text: 'waiting',
            eventType: 'docs_agent_outcome',
          },
        },
      ],
      Date.now(),
    );
    buildWork(base, side, tasks, { liveCount: () => 1 });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(agent.requests).toEqual([]);
    expect(slack.calls.slice(callsBefore).map((c) => c.method)).toEqual(['auth.test']);
    expect(tasks.size).toBe(0);
  });

  it('build a receiver with every listener registered, answering per readiness', async () => {
    const side = buildSlackSide(base, { liveCount: () => 1 });
    const tasks = createTaskTracker(base.logger, { gate: base.gate });
    const work = buildWork(base, side, tasks, { liveCount: () => 1 });
    let ready = false;
    const receiver = buildReceiver(base, side, work, tasks, () => ready);
    const port = await receiver.start();
    cleanups.push(() => receiver.stop());
    expect((await rawRequest(port, { method: 'GET', path: '/healthz' })).status).toBe(503);
    ready = true;
    expect((await rawRequest(port, { method: 'GET', path: '/healthz' })).status).toBe(200);
    // A command from a direct message is answered by the command listener, starting nothing.
    const res = await postSigned(
      `http://127.0.0.1:${port}`,
      slashCommand({ channel_id: 'D0DIRECT', channel_name: 'directmessage', text: 'Document webhooks' }),
    );
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/channel/i);
    expect(await tasks.drain(1_000)).toBe(true);
    expect(agent.requestsFor('create')).toEqual([]);
  });
});
