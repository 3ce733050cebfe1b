import { afterEach, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../../src/app.js';
import { readConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/logging/logger.js';
import { type AgentStandIn, API_KEY, PROJECT_ID, startAgentStandIn } from '../helpers/agent-stand-in.js';
import { tempDatabase, testEnv } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { slashCommand } from '../helpers/payloads.js';
import { freshSchemaUrl, postgresAvailable, shownUrl } from '../helpers/postgres.js';
import { type Exposition, parseExposition } from '../helpers/prometheus.js';
import { postSigned, SIGNING_SECRET } from '../helpers/signing.js';
import { BOT_TOKEN, type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';

const server = await postgresAvailable();
const TOKEN = 'metrics-test-token-0000';

if (server.ok) {
  describe('metrics of two instances on one PostgreSQL store', () => {
    let stands: { slack: SlackStandIn; agent: AgentStandIn; apps: RunningApp[] } | undefined;
    afterEach(async () => {
      await Promise.all(stands?.apps.map((a) => a.stop()) ?? []);
      await stands?.slack.close();
      await stands?.agent.close();
      stands = undefined;
    });

    it('reports the store figures alike from each instance, and each one’s own counters', async () => {
      const slack = await startSlackStandIn();
      const agent = await startAgentStandIn();
      const config = readConfig(
        testEnv(slack, agent, tempDatabase(), {
          DATABASE_URL: await freshSchemaUrl(),
          INSTANCE_TIMEOUT_MS: '3000',
          METRICS_TOKEN: TOKEN,
        }),
      );
      const logger = () =>
        createLogger({
          level: 'error',
          secrets: [BOT_TOKEN, SIGNING_SECRET, API_KEY, TOKEN],
          write: () => {},
        });
      const apps = [
        await startApp(config, { logger: logger() }),
        await startApp(config, { logger: logger() }),
      ];
      stands = { slack, agent, apps };
      const scrape = async (app: RunningApp): Promise<Exposition> => {
        const res = await fetch(`http://127.0.0.1:${app.port}/metrics`, {
          headers: { authorization: `Bearer ${TOKEN}` },
        });
        expect(res.status).toBe(200);
        return parseExposition(await res.text());
      };

      const base = `http://127.0.0.1:${apps[0]?.port}`;
      await postSigned(
        base,
        slashCommand({ text: 'Document the CLI', response_url: slack.responseUrl('m-1') }),
      );
      const started = { surface: 'command', result: 'started' };
      await waitFor('job started', async () => {
        const [app] = apps;
        return app && (await scrape(app)).value('docs_agent_instructions_total', started) === 1;
      });
      const [first, second] = await Promise.all(apps.map(scrape));
      if (!first || !second) throw new Error('two scrapes expected');
      for (const [name, labels] of [
        ['docs_agent_instances', {}],
        ['docs_agent_active_runs', {}],
        ['docs_agent_agent_quota_used', { project: PROJECT_ID }],
      ] as const) {
        expect(second.value(name, labels), name).toBe(first.value(name, labels));
      }
      expect(first.value('docs_agent_instances')).toBe(2);
      expect(first.value('docs_agent_active_runs')).toBe(1);
      expect(first.value('docs_agent_agent_quota_used', { project: PROJECT_ID })).toBe(1);
      // The instance Slack reached counted the instruction; the other did not.
      expect(first.value('docs_agent_instructions_total', started)).toBe(1);
      expect(second.value('docs_agent_instructions_total', started) ?? 0).toBe(0);
    });
  });
} else {
  console.warn(`Multi-instance metrics test NOT RUN: no PostgreSQL at ${shownUrl()} (${server.why}).`);
}
