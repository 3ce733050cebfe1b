import { type AddressInfo, createServer } from 'node:net';
import { WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { readConfig, secretsOf } from '../../src/config/config.js';
import { createSlackApp, type SlackApp, type SlackAppOptions } from '../../src/http/bolt-app.js';
import type { Route } from '../../src/http/front-server.js';
import { createLogger, createRedactor } from '../../src/logging/logger.js';
import { createSlackCaller } from '../../src/slack/caller.js';
import { slackClientOptions } from '../../src/slack/client-options.js';
import { createIdentity } from '../../src/slack/identity.js';
import { tempDatabase, testEnv } from '../helpers/harness.js';
import { rawRequest, waitFor } from '../helpers/http.js';
import { slashCommand } from '../helpers/payloads.js';
import { postSigned, SIGNING_SECRET, signature } from '../helpers/signing.js';
import { BOT_TOKEN, BOT_USER_ID, type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';
import { APP_TOKEN, startSocketModeStandIn } from '../helpers/socket-mode-stand-in.js';

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const extra: Route = {
  method: 'GET',
  path: '/extra',
  handle: (_req, res) => void res.end('extra'),
};

describe('the receiver of Slack’s requests', () => {
  let slack: SlackStandIn | undefined;
  let slackApp: SlackApp | undefined;
  let socketMode: Awaited<ReturnType<typeof startSocketModeStandIn>> | undefined;
  afterEach(async () => {
    await slackApp?.stop();
    await socketMode?.close();
    await slack?.close();
    slackApp = undefined;
    socketMode = undefined;
    slack = undefined;
  });

  /** The real receiver on a free port, against the Slack stand-in; `ready` says what /healthz answers. */
  async function start(env: Record<string, string> = {}, more: Partial<SlackAppOptions> = {}) {
    const config = readConfig(
      testEnv(slack as SlackStandIn, { url: 'http://127.0.0.1:9' }, tempDatabase(), env),
    );
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', secrets: secretsOf(config), write: (l) => lines.push(l) });
    const identity = createIdentity(
      createSlackCaller({
        client: new WebClient(config.slack.botToken, slackClientOptions(config, logger, 'web-api')),
        logger,
        redact: createRedactor(secretsOf(config)),
      }),
      logger,
    );
    await identity.get();
    const state = { ready: false };
    slackApp = createSlackApp({
      config,
      logger,
      identity,
      isReady: () => state.ready,
      routes: [extra],
      ...more,
    });
    const port = await slackApp.start();
    const logged = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    return { app: slackApp.app, port, base: `http://127.0.0.1:${port}`, state, logged };
  }

  it('serves /slack/events, /healthz by readiness and the routes it is given, and nothing else', async () => {
    slack = await startSlackStandIn();
    const { port, state } = await start();
    expect((await rawRequest(port, { method: 'GET', path: '/healthz' })).status).toBe(503);
    state.ready = true;
    expect((await rawRequest(port, { method: 'GET', path: '/healthz' })).status).toBe(200);
    expect(await rawRequest(port, { method: 'GET', path: '/extra' })).toEqual({ status: 200, body: 'extra' });
    expect((await rawRequest(port, { method: 'GET', path: '/slack/events' })).status).toBe(405);
    expect((await rawRequest(port, { method: 'POST', path: '/slack/actions', body: 'x' })).status).toBe(404);
  });

  it('hands a signed command to the listener with the bot token and the bot’s identity', async () => {
    slack = await startSlackStandIn();
    const { app, base } = await start();
    const seen: Record<string, unknown>[] = [];
    app.command('/docs-agent', async ({ ack, context, command }) => {
      seen.push({ botToken: context.botToken, botUserId: context.botUserId, text: command.text });
      await ack('on it');
    });
    const res = await postSigned(base, slashCommand({ text: 'Document webhooks' }));
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('on it');
    expect(seen).toEqual([{ botToken: BOT_TOKEN, botUserId: BOT_USER_ID, text: 'Document webhooks' }]);
    // A signature made with another secret never reaches the listener.
    expect((await postSigned(base, slashCommand(), { secret: 'not-the-signing-secret' })).status).toBe(401);
    expect(seen).toHaveLength(1);
  });

  it('answers 500 when a listener fails, so Slack shows it failed, and logs the error', async () => {
    slack = await startSlackStandIn();
    const { app, base, logged } = await start();
    app.command('/docs-agent', async () => {
      throw new Error('listener bug');
    });
    const res = await postSigned(base, slashCommand({ text: 'Document webhooks' }));
    expect(res.status).toBe(500);
    const line = logged().find((l) => l.msg === 'unhandled error in a listener');
    expect(JSON.stringify(line)).toContain('listener bug');
  });

  it('refuses before Bolt what Slack never sends, closing the connection and logging why', async () => {
    slack = await startSlackStandIn();
    const { base, logged } = await start();
    const odd = await postSigned(base, '<xml/>', { contentType: 'text/xml' });
    expect(odd.status).toBe(415);
    expect(odd.headers.get('connection')).toBe('close');
    expect(await odd.text()).toBe('unsupported content type');
    // A body far larger than any of Slack's, sent without a length to check up front.
    const body = `payload=${'x'.repeat(300 * 1024)}`;
    const timestamp = Math.floor(Date.now() / 1000);
    const huge = await fetch(`${base}/slack/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': String(timestamp),
        'x-slack-signature': signature(SIGNING_SECRET, timestamp, body),
      },
      body: new Blob([body]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(huge.status).toBe(413);
    const refusals = logged().filter((l) => l.msg === 'request refused before Bolt');
    expect(refusals.map((l) => [l.status, l.reason])).toEqual([
      [415, 'unsupported content type'],
      [413, 'body too large'],
    ]);
  });

  it('in Socket Mode serves /healthz and its routes over HTTP, but no /slack/events', async () => {
    socketMode = await startSocketModeStandIn();
    slack = await startSlackStandIn({ socketModeUrl: socketMode.url, appToken: APP_TOKEN });
    const { port, state } = await start({ SLACK_APP_TOKEN: APP_TOKEN, SLACK_SIGNING_SECRET: '' });
    await waitFor('the socket connected', () => socketMode?.connected());
    state.ready = true;
    expect((await rawRequest(port, { method: 'GET', path: '/healthz' })).status).toBe(200);
    expect((await rawRequest(port, { method: 'GET', path: '/extra' })).status).toBe(200);
    expect((await rawRequest(port, { method: 'POST', path: '/slack/events', body: '{}' })).status).toBe(404);
  });

  it('in Socket Mode answers 503 on /healthz as soon as Slack refuses the app token on a reconnect', async () => {
    socketMode = await startSocketModeStandIn();
    slack = await startSlackStandIn({ socketModeUrl: socketMode.url, appToken: APP_TOKEN });
    const refusals: Error[] = [];
    const { port, state } = await start(
      { SLACK_APP_TOKEN: APP_TOKEN, SLACK_SIGNING_SECRET: '' },
      { onAppTokenRefused: (error) => void refusals.push(error) },
    );
    state.ready = true;
    expect((await rawRequest(port, { method: 'GET', path: '/healthz' })).status).toBe(200);
    slack.fail('apps.connections.open', { error: 'invalid_auth' });
    socketMode.askToReconnect('refresh_requested');
    await waitFor('the refusal told', () => refusals.length === 1);
    expect(refusals[0]?.message).toContain('SLACK_APP_TOKEN');
    // The old connection is still open, but no connection can be opened again: not healthy.
    expect(socketMode.connected()).toBe(true);
    expect((await rawRequest(port, { method: 'GET', path: '/healthz' })).status).toBe(503);
  });

  it('in Socket Mode fails to start when Slack refuses the app token, and frees its port', async () => {
    socketMode = await startSocketModeStandIn();
    slack = await startSlackStandIn({ socketModeUrl: socketMode.url, appToken: 'xapp-another-token' });
    const port = await freePort();
    const env = { SLACK_APP_TOKEN: APP_TOKEN, SLACK_SIGNING_SECRET: '', PORT: String(port) };
    const failure = await start(env).catch((error: unknown) => error);
    slackApp = undefined;
    expect(String(failure)).toContain('Slack refused SLACK_APP_TOKEN (invalid_auth)');
    expect(socketMode.openedCount()).toBe(0);
    // The health port was let go: a restart can bind it again.
    const again = createServer();
    await new Promise<void>((resolve, reject) =>
      again.once('error', reject).listen(port, '127.0.0.1', resolve),
    );
    await new Promise((resolve) => again.close(resolve));
  });
});
