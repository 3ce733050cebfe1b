import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import type pg from 'pg';
import { afterEach, beforeEach, expect } from 'vitest';
import { type RunningApp, startApp } from '../../src/app.js';
import { readConfig, secretsOf } from '../../src/config/config.js';
import { createLogger } from '../../src/logging/logger.js';
import type { FollowingPace } from '../../src/pull-requests/pace.js';
import { inertSlackText } from '../../src/slack/mrkdwn.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import type { TaskTrackerOptions } from '../../src/util/tasks.js';
import { type AgentStandIn, API_KEY, PROJECT_ID, startAgentStandIn } from './agent-stand-in.js';
import { waitFor } from './http.js';
import {
  type CommandFields,
  eventEnvelope,
  interaction,
  type MessageFields,
  messageEvent,
  slashCommand,
} from './payloads.js';
import { postSigned, type SendOptions, SIGNING_SECRET } from './signing.js';
import { BOT_TOKEN, type SlackStandIn, startSlackStandIn } from './slack-stand-in.js';

/** Configuration environment for an app wired to the given stand-ins. */
export function testEnv(
  slack: { apiUrl: string },
  agent: { url: string },
  databasePath: string,
  overrides: Record<string, string> = {},
) {
  return {
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: slack.apiUrl,
    DOCS_AGENT_API_KEY: API_KEY,
    DOCS_AGENT_PROJECT_ID: PROJECT_ID,
    DOCS_AGENT_API_URL: agent.url,
    DOCS_AGENT_API_TIMEOUT_MS: '1500',
    DATABASE_PATH: databasePath,
    PORT: '0',
    POLL_INTERVAL_MS: '40',
    POLL_MAX_INTERVAL_MS: '200',
    // Tests poll every few milliseconds; the production budget would pace them to a crawl.
    POLL_MAX_RPS: '2000',
    // Follow-ups go out at once unless a test is about the batch window.
    FOLLOW_UP_BATCH_MS: '0',
    LOG_LEVEL: 'debug',
    ...overrides,
  };
}

export const tempDatabase = () => join(mkdtempSync(join(tmpdir(), 'docs-agent-')), 'store.sqlite');

/**
 * The real app in-process, on a free port, against loopback stand-ins for Slack and the agent
 * API. Every log line is kept so tests can check that no secret is ever written.
 */
export async function startHarness(
  overrides: Record<string, string> = {},
  options: {
    /** Prepares the store file (and the Slack stand-in) before the app first starts. */
    seed?: (store: Store, slack: SlackStandIn, agent: AgentStandIn) => Promise<void>;
    /** Documentation projects the agent stand-in serves (CHANNEL_PROJECTS). */
    projects?: string[];
    /** Wraps the store the first app runs on (to inject store faults). */
    wrapStore?: (store: Store) => Store;
    /** Bounds of the background work (small ones show back-pressure). */
    tasks?: TaskTrackerOptions;
    /** How often followed pull requests are checked (`GITHUB_TOKEN`); quick ones in tests. */
    pullRequestPace?: FollowingPace;
  } = {},
) {
  // Secrets given as overrides are the ones the stand-ins expect and the requests are signed with.
  const signingSecret = overrides.SLACK_SIGNING_SECRET ?? SIGNING_SECRET;
  const slack: SlackStandIn = await startSlackStandIn({ botToken: overrides.SLACK_BOT_TOKEN ?? BOT_TOKEN });
  const agent: AgentStandIn = await startAgentStandIn({
    apiKey: overrides.DOCS_AGENT_API_KEY ?? API_KEY,
    ...(options.projects ? { projects: options.projects } : {}),
  });
  const databasePath = tempDatabase();
  const logs: string[] = [];
  const env = testEnv(slack, agent, databasePath, overrides);
  const config = readConfig(env);
  const logger = () =>
    createLogger({
      level: 'debug',
      secrets: secretsOf(config),
      write: (line) => logs.push(line),
    });

  if (options.seed) {
    const store = openSqliteStore(databasePath);
    await options.seed(store, slack, agent);
    await store.close();
  }
  let app: RunningApp = await startApp(config, {
    logger: logger(),
    // Instructions waiting for verification are checked again within tests' patience.
    verificationRetryMs: 50,
    ...(options.tasks ? { tasks: options.tasks } : {}),
    ...(options.pullRequestPace ? { pullRequestPace: options.pullRequestPace } : {}),
    ...(options.wrapStore ? { store: options.wrapStore(openSqliteStore(databasePath)) } : {}),
  });
  const base = () => `http://127.0.0.1:${app.port}`;

  const harness = {
    slack,
    agent,
    logs,
    config,
    get app() {
      return app;
    },
    base,
    command: (fields: CommandFields = {}, options?: SendOptions) =>
      postSigned(base(), slashCommand({ response_url: slack.responseUrl(`r${Date.now()}`), ...fields }), {
        secret: signingSecret,
        ...options,
      }),
    event: (fields: MessageFields, envelope: { event_id?: string } = {}, options?: SendOptions) =>
      postSigned(base(), messageEvent(fields, envelope), {
        contentType: 'application/json',
        secret: signingSecret,
        ...options,
      }),
    /** Any Events API event (app_mention, app_home_opened…), signed. */
    anyEvent: (event: Record<string, unknown>) =>
      postSigned(base(), eventEnvelope(event), { contentType: 'application/json', secret: signingSecret }),
    /** An interactivity payload (shortcut, view submission, button click), signed. */
    interact: (payload: Record<string, unknown>) =>
      postSigned(base(), interaction(payload), { secret: signingSecret }),
    /** Starts a job with `/docs-agent` and waits until the agent has it; returns its thread and id. */
    async startJob(fields: CommandFields = {}) {
      const before = agent.requestsFor('create').length;
      const res = await harness.command(fields);
      if (res.status !== 200) throw new Error(`command answered ${res.status}`);
      await waitFor('create call', () => agent.requestsFor('create').length > before);
      const jobId = `job_${agent.jobs.size}`;
      const root = await waitFor('root message', () =>
        slack.messages.find(
          (m) => !m.thread_ts && m.text.includes(inertSlackText(fields.text ?? 'Add a quickstart')),
        ),
      );
      await waitFor(
        'job recorded as active',
        async () => (await app.store.findJobByThread(root.channel, root.ts))?.phase === 'active',
      );
      return { threadTs: root.ts, channel: root.channel, jobId };
    },
    /**
     * Resolves once the app has finished what it was sent: no background task running or queued
     * and no outbox item due or being delivered, on two checks in a row. A test that asserts something did not
     * happen waits for this (after the positive sign that its request arrived) instead of a
     * guessed pause.
     */
    settled: () => settled(app),
    /** Stops the app (as on SIGTERM) and starts a new one on the same store file. */
    async restart() {
      await app.stop();
      app = await startApp(config, {
        logger: logger(),
        verificationRetryMs: 50,
        ...(options.tasks ? { tasks: options.tasks } : {}),
        ...(options.pullRequestPace ? { pullRequestPace: options.pullRequestPace } : {}),
      });
    },
    async stop() {
      await app.stop();
      await slack.close();
      await agent.close();
    },
  };
  return harness;
}

/**
 * Resolves once `app` has no background task running or queued and no outbox item due or being
 * delivered, on two checks in a row (work handed over between two awaits is not missed). An
 * item being delivered is claimed, so it is no longer due: without counting claims, a test would
 * go on while a post is still on its way to the Slack stand-in.
 */
export async function settled(app: RunningApp, timeoutMs = 5_000): Promise<void> {
  let quiet = 0;
  await waitFor(
    'the app to settle',
    async () => {
      const idle =
        app.backgroundTasks === 0 &&
        (await app.store.dueOutbox(Date.now(), 1)).length === 0 &&
        (await claimedOutboxItems(app.store)) === 0;
      quiet = idle ? quiet + 1 : 0;
      return quiet >= 2;
    },
    timeoutMs,
  );
}

/**
 * Undelivered outbox items some instance has claimed: being delivered now (or held by a claim
 * that ran out, which the outbox takes again as due). The Store interface has no such read; the
 * stores' own connections answer it.
 */
async function claimedOutboxItems(store: Store): Promise<number> {
  const sql =
    'SELECT COUNT(*) AS n FROM outbox WHERE claimed_by IS NOT NULL AND delivered_at IS NULL AND dead_at IS NULL';
  if ('db' in store) return ((store.db as Database.Database).prepare(sql).get() as { n: number }).n;
  if ('pool' in store) return Number((await (store.pool as pg.Pool).query(sql)).rows[0]?.n);
  throw new Error('settled knows the SQLite and PostgreSQL stores only');
}

export type Harness = Awaited<ReturnType<typeof startHarness>>;

/**
 * Stops a test's harness (if it started), then applies the stand-ins' own checks: the agent
 * stand-in saw only documented requests, the Slack stand-in only methods it knows and only
 * blocks and views Slack would accept.
 */
export async function stopChecked(h: Harness | undefined): Promise<void> {
  if (!h) return;
  await h.stop();
  expect(h.agent.violations).toEqual([]);
  expect(h.slack.unexpected, 'Slack methods the stand-in does not know').toEqual([]);
  expect(h.slack.invalid, 'blocks or views Slack would refuse').toEqual([]);
}

/**
 * A fresh harness for every test of the file, stopped after it, with the stand-ins' own checks:
 * the agent stand-in saw only documented requests, the Slack stand-in only methods it knows.
 * The returned object always stands for the current test's harness.
 */
export function useHarness(
  overrides: Record<string, string> = {},
  options: Parameters<typeof startHarness>[1] = {},
): Harness {
  let current: Harness | undefined;
  beforeEach(async () => {
    current = await startHarness(overrides, options);
  });
  afterEach(async () => {
    const h = current;
    current = undefined;
    await stopChecked(h);
  });
  return new Proxy({} as Harness, {
    get(_target, key) {
      if (!current) throw new Error('no harness outside a test');
      return Reflect.get(current, key, current);
    },
  });
}
