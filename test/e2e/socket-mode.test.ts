import { afterEach, describe, expect, it } from 'vitest';
import { type RunningApp, startApp } from '../../src/app.js';
import { readConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/logging/logger.js';
import { type AgentStandIn, startAgentStandIn } from '../helpers/agent-stand-in.js';
import { tempDatabase, testEnv } from '../helpers/harness.js';
import { rawRequest, STRAY_REQUESTS, waitFor } from '../helpers/http.js';
import { socketSlashCommand } from '../helpers/payloads.js';
import { type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';
import { APP_TOKEN, startSocketModeStandIn } from '../helpers/socket-mode-stand-in.js';

let app: RunningApp | undefined;
let slack: SlackStandIn | undefined;
let agent: AgentStandIn | undefined;
let socket: Awaited<ReturnType<typeof startSocketModeStandIn>> | undefined;
afterEach(async () => {
  await app?.stop();
  await socket?.close();
  await slack?.close();
  await agent?.close();
});

/** The app in Socket Mode against fresh stand-ins, connected. */
async function startInSocketMode() {
  const started = {
    socket: await startSocketModeStandIn(),
    agent: await startAgentStandIn(),
  };
  const stand = await startSlackStandIn({ socketModeUrl: started.socket.url, appToken: APP_TOKEN });
  const env = testEnv(stand, started.agent, tempDatabase(), {
    SLACK_APP_TOKEN: APP_TOKEN,
    SLACK_SIGNING_SECRET: '',
  });
  const running = await startApp(readConfig(env), { logger: createLogger({ level: 'error', secrets: [] }) });
  app = running;
  await waitFor('socket connected', () => started.socket.connected());
  return { ...started, slack: stand, port: running.port };
}

describe('Socket Mode', () => {
  it('connects with the app token, takes a command over the socket, and still serves /healthz', async () => {
    const started = await startInSocketMode();
    ({ socket, slack, agent } = started);
    expect((await fetch(`http://127.0.0.1:${started.port}/healthz`)).status).toBe(200);

    const envelope = socket.send('slash_commands', socketSlashCommand(slack.responseUrl('socket')));
    await waitFor('ack', () => socket?.acks.has(envelope));
    await waitFor('job created', () => agent?.requestsFor('create').length === 1);
    expect(agent.requestsFor('create')[0]?.body).toEqual({ prompt: 'Explain rate limits' });
  });

  it('answers requests it does not serve with 404 or 405 and keeps its socket', async () => {
    const started = await startInSocketMode();
    ({ socket, slack, agent } = started);
    const port = started.port;
    for (const stray of STRAY_REQUESTS) {
      // Socket Mode serves no /slack/events at all.
      const expected = stray.path === '/slack/events' ? 404 : stray.expect;
      expect((await rawRequest(port, stray)).status, `${stray.method} ${stray.path}`).toBe(expected);
    }
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect(socket.connected()).toBeTruthy();
  });
});
