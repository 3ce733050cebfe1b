import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { slackClientOptions } from '../../src/slack/client-options.js';
import {
  createSocketConnections,
  SOCKET_LOST_GRACE_MS,
  type SocketConnections,
} from '../../src/slack/socket-connections.js';
import { AppTokenRefusedError, type SocketEnvelope } from '../../src/slack/socket-mode-client.js';
import { waitFor } from '../helpers/http.js';
import { socketSlashCommand } from '../helpers/payloads.js';
import { type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';
import { APP_TOKEN, startSocketModeStandIn } from '../helpers/socket-mode-stand-in.js';

type SocketStandIn = Awaited<ReturnType<typeof startSocketModeStandIn>>;

let socket: SocketStandIn | undefined;
let slack: SlackStandIn | undefined;
let connections: SocketConnections | undefined;
afterEach(async () => {
  await connections?.stop();
  await socket?.close();
  await slack?.close();
  connections = undefined;
});

interface Line {
  level: string;
  msg: string;
  [field: string]: unknown;
}

/** Connections against fresh stand-ins; `clock` is what they read as now, `hold` keeps envelopes in hand. */
async function connect(options: { hold?: Promise<void> } = {}) {
  socket = await startSocketModeStandIn();
  slack = await startSlackStandIn({ socketModeUrl: socket.url, appToken: APP_TOKEN });
  const lines: Line[] = [];
  const logger = createLogger({
    level: 'debug',
    secrets: [APP_TOKEN],
    write: (line) => lines.push(JSON.parse(line) as Line),
  });
  const config = { slack: { apiUrl: slack.apiUrl }, logLevel: 'debug' } as const;
  const handled: Record<string, unknown>[] = [];
  const refusals: AppTokenRefusedError[] = [];
  const clock = { now: 1_000_000 };
  connections = createSocketConnections({
    appToken: APP_TOKEN,
    logger,
    logLevel: 'debug',
    clientOptions: slackClientOptions(config as never, logger, 'bolt'),
    handle: async (envelope: SocketEnvelope) => {
      await envelope.ack();
      await options.hold;
      handled.push(envelope.body);
    },
    onRefused: (error) => refusals.push(error),
    now: () => clock.now,
  });
  return { connections, socket, slack, lines, handled, refusals, clock };
}

const command = (n: number) => socketSlashCommand(`http://127.0.0.1:9/respond/${n}`, `command ${n}`);
/** Lines our code wrote about the connections, and every warning or error from anywhere. */
const said = (lines: Line[]) =>
  lines.filter((l) => l.component === 'socket-mode').map((l) => `${l.level} ${l.msg}`);
const loud = (lines: Line[]) => lines.filter((l) => l.level === 'warn' || l.level === 'error');

describe('Socket Mode connections', () => {
  it('replace a connection Slack asks to refresh before closing it: no gap, nothing lost, said at info', async () => {
    let release = () => {};
    const hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { connections, socket, lines, handled } = await connect({ hold });
    await connections.start();
    const old = socket.askToReconnect('refresh_requested');
    // Slack still delivers over the old connection until it closes it.
    const during = socket.send('slash_commands', command(1), old);
    await waitFor('the envelope sent during the refresh acknowledged', () => socket.acks.has(during));
    await waitFor('the new connection', () => socket.openedCount() === 2 && socket.openCount() === 2);
    expect(connections.healthy()).toBe(true);
    const over = socket.send('slash_commands', command(2));
    await waitFor('an envelope over the new connection acknowledged', () => socket.acks.has(over));
    // The old connection stays open while what it delivered is still being handled.
    expect(socket.isOpen(old)).toBe(true);
    expect(handled).toEqual([]);
    release();
    await waitFor('the old connection closed', () => !socket.isOpen(old));
    await waitFor('said closed', () => lines.some((l) => l.msg === 'replaced Socket Mode connection closed'));
    expect(handled).toHaveLength(2);

    expect(socket.gaps()).toBe(0);
    expect(connections.healthy()).toBe(true);
    expect(said(lines)).toEqual([
      'info Socket Mode connection open',
      'info Slack asked for a new Socket Mode connection; opening it before this one closes',
      'info Socket Mode connection open',
      'info replaced Socket Mode connection closed',
    ]);
    expect(loud(lines)).toEqual([]);
  });

  it('a `warning` is a refresh too: the new connection opens first', async () => {
    const { connections, socket, lines } = await connect();
    await connections.start();
    const old = socket.askToReconnect('warning');
    await waitFor('the old connection closed', () => socket.openedCount() === 2 && !socket.isOpen(old));
    expect(socket.gaps()).toBe(0);
    expect(loud(lines)).toEqual([]);
  });

  it('replace a connection that is cut at once, and stay healthy meanwhile', async () => {
    const { connections, socket, lines } = await connect();
    await connections.start();
    socket.drop();
    await waitFor('closed', () =>
      lines.some((l) => l.msg === 'Socket Mode connection closed; opening another'),
    );
    expect(connections.healthy()).toBe(true);
    await waitFor('a new connection', () => socket.openCount() === 1 && socket.openedCount() === 2);
    expect(connections.healthy()).toBe(true);
    expect(lines.find((l) => l.msg === 'Socket Mode connection closed; opening another')?.level).toBe('info');
  });

  it(`stop being healthy once no connection has been open for ${SOCKET_LOST_GRACE_MS / 1000} s`, async () => {
    const { connections, socket, slack, lines, clock } = await connect();
    await connections.start();
    slack.fail('apps.connections.open', { status: 503 });
    const lostAt = clock.now;
    socket.drop();
    const failed = await waitFor('a failed attempt', () =>
      lines.find((l) => l.msg === 'could not open a Socket Mode connection; trying again'),
    );
    expect(failed).toMatchObject({ level: 'warn', failures: 1, retryInMs: 1_000 });
    clock.now = lostAt + SOCKET_LOST_GRACE_MS - 1;
    expect(connections.healthy()).toBe(true);
    clock.now = lostAt + SOCKET_LOST_GRACE_MS;
    expect(connections.healthy()).toBe(false);
    // The next attempt, a second later, opens one: healthy again.
    await waitFor('reconnected', () => socket.openCount() === 1, 5_000);
    await waitFor('healthy again', () => connections.healthy());
  });

  it.each(['invalid_auth', 'not_authed', 'token_revoked'])(
    'refuse to start when Slack answers %s, naming SLACK_APP_TOKEN and not the token',
    async (code) => {
      const { connections, socket, slack } = await connect();
      slack.fail('apps.connections.open', { error: code });
      const error = await connections.start().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppTokenRefusedError);
      expect(error).toMatchObject({ code });
      expect(String(error)).toContain('SLACK_APP_TOKEN');
      expect(String(error)).not.toContain(APP_TOKEN);
      expect(socket.openedCount()).toBe(0);
      expect(connections.healthy()).toBe(false);
    },
  );

  it('tell of a refusal on a reconnect once, and stop being healthy at once', async () => {
    const { connections, socket, slack, refusals, lines } = await connect();
    await connections.start();
    slack.fail('apps.connections.open', { error: 'token_revoked' });
    socket.askToReconnect('refresh_requested');
    await waitFor('the refusal told', () => refusals.length === 1);
    expect(refusals[0]).toMatchObject({ name: 'AppTokenRefusedError', code: 'token_revoked' });
    expect(refusals[0]?.message).toContain('SLACK_APP_TOKEN');
    expect(connections.healthy()).toBe(false);
    // Nothing is tried again: only Slack's answer and the one refused call.
    expect(slack.callsTo('apps.connections.open')).toHaveLength(2);
    expect(lines.some((l) => l.msg === 'could not open a Socket Mode connection; trying again')).toBe(false);
  });

  it('say so at error when Slack turns Socket Mode off for the app (link_disabled)', async () => {
    const { connections, socket, lines } = await connect();
    await connections.start();
    socket.askToReconnect('link_disabled');
    const line = await waitFor('the error', () => lines.find((l) => l.msg.includes('link_disabled')));
    expect(line.level).toBe('error');
    expect(connections.healthy()).toBe(true);
  });

  it('stop: every connection closed, and none opened again', async () => {
    const { connections, socket, slack } = await connect();
    await connections.start();
    slack.fail('apps.connections.open', { status: 503 }, { status: 503 });
    socket.drop();
    await waitFor('an attempt', () => slack?.callsTo('apps.connections.open').length === 2);
    await connections.stop();
    const calls = slack.callsTo('apps.connections.open').length;
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(slack.callsTo('apps.connections.open')).toHaveLength(calls);
    expect(socket.openCount()).toBe(0);
  });
});
