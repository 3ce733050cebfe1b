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
  app = undefined;
});

/** The app's log lines, parsed. */
let lines: { level: string; msg: string; [field: string]: unknown }[] = [];

/** The app in Socket Mode against fresh stand-ins; Slack takes `slackAppToken` (default: the app's). */
async function startInSocketMode(slackAppToken = APP_TOKEN) {
  const started = {
    socket: await startSocketModeStandIn(),
    agent: await startAgentStandIn(),
  };
  const stand = await startSlackStandIn({ socketModeUrl: started.socket.url, appToken: slackAppToken });
  ({ socket, agent } = started);
  slack = stand;
  const env = testEnv(stand, started.agent, tempDatabase(), {
    SLACK_APP_TOKEN: APP_TOKEN,
    SLACK_SIGNING_SECRET: '',
  });
  lines = [];
  const logger = createLogger({
    level: 'info',
    secrets: [APP_TOKEN],
    write: (l) => lines.push(JSON.parse(l)),
  });
  const running = await startApp(readConfig(env), { logger });
  app = running;
  await waitFor('socket connected', () => started.socket.connected());
  return { ...started, slack: stand, app: running, port: running.port };
}

const healthz = async (port: number) => (await fetch(`http://127.0.0.1:${port}/healthz`)).status;
const loud = () => lines.filter((l) => l.level === 'warn' || l.level === 'error');

describe('Socket Mode', () => {
  it('connects with the app token, takes a command over the socket, and still serves /healthz', async () => {
    const started = await startInSocketMode();
    ({ socket, slack, agent } = started);
    expect(await healthz(started.port)).toBe(200);

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

  it('takes Slack’s routine refresh with no gap: /healthz stays 200 and a command sent meanwhile is answered', async () => {
    const { socket, slack, agent, port } = await startInSocketMode();
    const old = socket.askToReconnect('refresh_requested');
    // Until Slack closes the old connection, it may still deliver over it.
    const during = socket.send(
      'slash_commands',
      socketSlashCommand(slack.responseUrl('during'), 'During'),
      old,
    );
    await waitFor('the command sent during the refresh acknowledged', () => socket.acks.has(during));
    expect(await healthz(port)).toBe(200);
    await waitFor('the old connection replaced', () => socket.openedCount() === 2 && !socket.isOpen(old));
    expect(await healthz(port)).toBe(200);
    const after = socket.send('slash_commands', socketSlashCommand(slack.responseUrl('after'), 'After'));
    await waitFor('the command sent after acknowledged', () => socket.acks.has(after));
    await waitFor('both jobs created', () => agent.requestsFor('create').length === 2);
    expect(agent.requestsFor('create').map((r) => r.body)).toEqual([
      { prompt: 'During' },
      { prompt: 'After' },
    ]);

    expect(socket.gaps()).toBe(0);
    const refresh = lines.find((l) => l.msg.startsWith('Slack asked for a new Socket Mode connection'));
    expect(refresh).toMatchObject({ level: 'info', reason: 'refresh_requested' });
    expect(loud()).toEqual([]);
  });

  it('stops, naming SLACK_APP_TOKEN, when Slack refuses the app token on a reconnect', async () => {
    const { socket, slack, app: running, port } = await startInSocketMode();
    expect(await healthz(port)).toBe(200);
    slack.fail('apps.connections.open', { error: 'token_revoked' });
    socket.drop();
    const error = await running.failed;
    expect(error).toMatchObject({ name: 'AppTokenRefusedError', code: 'token_revoked' });
    expect(error.message).toContain('SLACK_APP_TOKEN');
    await running.stop();
    const said = lines.find((l) => l.level === 'error' && l.msg.includes('SLACK_APP_TOKEN'));
    expect(said?.msg).toBe('Slack refused SLACK_APP_TOKEN; stopping');
    expect(lines.at(-1)?.msg).toBe('stopped');
    // The store is closed, as on SIGTERM.
    await expect(running.store.findJobByThread('C0GENERAL', '1.0')).rejects.toThrow();
    expect(JSON.stringify(lines)).not.toContain(APP_TOKEN);
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });

  it('does not start when Slack refuses the app token, and says SLACK_APP_TOKEN is at fault', async () => {
    const refused = await startInSocketMode('xapp-another-token').catch((error: unknown) => error);
    expect(refused).toMatchObject({ name: 'AppTokenRefusedError', code: 'invalid_auth' });
    expect(String(refused)).toContain('Slack refused SLACK_APP_TOKEN (invalid_auth)');
    expect(String(refused)).not.toContain(APP_TOKEN);
    expect(socket?.openedCount()).toBe(0);
  });
});
