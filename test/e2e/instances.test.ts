import { afterEach, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../../src/app.js';
import { readConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/logging/logger.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { API_KEY, startAgentStandIn } from '../helpers/agent-stand-in.js';
import { settled, tempDatabase, testEnv } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { messageEvent, slashCommand } from '../helpers/payloads.js';
import { freshSchemaUrl, postgresAvailable, shownUrl } from '../helpers/postgres.js';
import { postSigned, SIGNING_SECRET } from '../helpers/signing.js';
import { BOT_TOKEN, startSlackStandIn } from '../helpers/slack-stand-in.js';

const server = await postgresAvailable();

/** Two instances of the app in-process on one PostgreSQL store and one set of stand-ins. */
async function startPair(overrides: Record<string, string> = {}) {
  const slack = await startSlackStandIn();
  const agent = await startAgentStandIn();
  const databaseUrl = await freshSchemaUrl();
  const config = readConfig(
    testEnv(slack, agent, tempDatabase(), {
      DATABASE_URL: databaseUrl,
      INSTANCE_TIMEOUT_MS: '1500',
      ...overrides,
    }),
  );
  const logs: string[] = [];
  const start = () =>
    startApp(config, {
      logger: createLogger({
        level: 'debug',
        secrets: [BOT_TOKEN, SIGNING_SECRET, API_KEY],
        write: (line) => logs.push(line),
      }),
    });
  const apps: RunningApp[] = [await start(), await start()];
  const base = (i: number) => `http://127.0.0.1:${apps[i]?.port}`;
  return {
    slack,
    agent,
    databaseUrl,
    logs,
    apps,
    start,
    command: (i: number, text: string, responseId: string, user = 'U0ALICE') =>
      postSigned(base(i), slashCommand({ text, user_id: user, response_url: slack.responseUrl(responseId) })),
    event: (i: number, body: string) => postSigned(base(i), body, { contentType: 'application/json' }),
    rootOf: (text: string) =>
      waitFor(`root of "${text}"`, () => slack.messages.find((m) => !m.thread_ts && m.text.includes(text))),
    async stop() {
      await Promise.all(apps.map((a) => a.stop()));
      await slack.close();
      await agent.close();
      expect(agent.violations).toEqual([]);
    },
  };
}

if (server.ok) {
  describe('several instances on one PostgreSQL store', () => {
    let pair: Awaited<ReturnType<typeof startPair>> | undefined;
    afterEach(async () => {
      await pair?.stop();
      pair = undefined;
    });

    it('counts one person’s hourly limit across instances', async () => {
      pair = await startPair({ MAX_INSTRUCTIONS_PER_USER_PER_HOUR: '2' });
      expect((await pair.command(0, 'Document area one', 'lim-1')).status).toBe(200);
      expect((await pair.command(1, 'Document area two', 'lim-2')).status).toBe(200);
      await waitFor('two jobs created', () => pair?.agent.requestsFor('create').length === 2);
      expect((await pair.command(0, 'Document area three', 'lim-3')).status).toBe(200);
      const refusal = await waitFor('refusal', () =>
        pair?.slack.responses.find((r) => r.path === '/respond/lim-3'),
      );
      expect(String(refusal.body.text)).toMatch(/2 instructions/);
      await Promise.all(pair.apps.map((app) => settled(app)));
      expect(pair.agent.requestsFor('create')).toHaveLength(2);
    });

    it('sends a reply that Slack delivers to both instances once', async () => {
      pair = await startPair();
      await pair.command(0, 'Document the CLI', 'dup-1');
      const root = await pair.rootOf('Document the CLI');
      await waitFor('job created', () => pair?.agent.jobs.size === 1);
      const body = messageEvent({
        channel: root.channel,
        thread_ts: root.ts,
        ts: '1700000300.000001',
        text: 'Also Go',
      });
      const answers = await Promise.all([pair.event(0, body), pair.event(1, body), pair.event(1, body)]);
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
      await waitFor('follow-up sent', () => pair?.agent.requestsFor('message').length === 1);
      await Promise.all(pair.apps.map((app) => settled(app)));
      expect(pair.agent.requestsFor('message')).toHaveLength(1);
    });

    it('answers a job from the other instance after the one that started it stops', async () => {
      pair = await startPair();
      await pair.command(0, 'Document webhooks', 'hand-1');
      const root = await pair.rootOf('Document webhooks');
      await waitFor('job created', () => pair?.agent.jobs.size === 1);
      await pair.apps[0]?.stop();
      pair.agent.complete('job_1', 'https://github.com/example/docs/pull/77');
      const outcome = await waitFor('outcome', () => pair?.slack.threadPosts(root.ts)[0]);
      expect(outcome.text).toContain('pull/77');
      await settled(pair.apps[1] as RunningApp);
      expect(pair.slack.threadPosts(root.ts)).toHaveLength(1);
    });

    it('takes over a stopped instance’s half-done command only once that instance has been quiet for INSTANCE_TIMEOUT_MS', async () => {
      pair = await startPair({ INSTANCE_TIMEOUT_MS: '1500' });
      // Another instance recorded a command and went silent before starting it.
      const seeder = await openPostgresStore(pair.databaseUrl, { max: 1 });
      const quietSince = Date.now();
      await seeder.heartbeat('gone-instance');
      await seeder.insertJob(
        {
          teamId: 'T0TEST',
          channelId: 'C0GENERAL',
          requesterId: 'U0ALICE',
          instruction: 'Document the orphaned flow',
          triggerKey: 'command:orphan',
          responseUrl: null,
          pollIntervalMs: 40,
          owner: 'gone-instance',
        },
        { kind: 'create', prompt: 'Document the orphaned flow', authorId: 'U0ALICE', messageTs: null },
        quietSince,
      );
      await seeder.close();

      const root = await pair.rootOf('Document the orphaned flow');
      const tookOver = Date.now() - quietSince;
      // Not before the time-out (the owner might still be working on it), and soon after.
      expect(tookOver).toBeGreaterThanOrEqual(1_500);
      expect(tookOver).toBeLessThan(4_000);
      await waitFor('job created once', () => pair?.agent.jobs.size === 1);
      expect(pair.slack.messages.filter((m) => m.ts === root.ts)).toHaveLength(1);
      expect(pair.logs.filter((l) => l.includes('taking over work a stopped instance left'))).toHaveLength(1);
    });
  });
} else {
  console.warn(
    `Multi-instance app tests NOT RUN: no PostgreSQL at ${shownUrl()} (${server.why}). ` +
      'Start PostgreSQL or set TEST_DATABASE_URL; .ci/run starts it.',
  );
}
