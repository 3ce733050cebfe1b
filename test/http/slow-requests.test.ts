import { connect, type Socket } from 'node:net';
import { WebClient } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { readConfig, secretsOf } from '../../src/config/config.js';
import { createSlackApp, type SlackApp } from '../../src/http/bolt-app.js';
import { SLACK_BODY_TIMEOUT_MS } from '../../src/http/screening.js';
import { createLogger, createRedactor } from '../../src/logging/logger.js';
import { createSlackCaller } from '../../src/slack/caller.js';
import { slackClientOptions } from '../../src/slack/client-options.js';
import { createIdentity } from '../../src/slack/identity.js';
import { createYieldGate, type YieldGate } from '../../src/util/yield-gate.js';
import { tempDatabase, testEnv } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { slashCommand } from '../helpers/payloads.js';
import { postSigned } from '../helpers/signing.js';
import { type SlackStandIn, startSlackStandIn } from '../helpers/slack-stand-in.js';

/**
 * The yield gate as the receiver sees it, counting what it is told. Background work is held a
 * whole minute while a request is in flight, so a step that passes shows the gate was quiet.
 */
function countingGate() {
  const gate = createYieldGate({ holdMs: 60_000 });
  const told = { started: 0, ended: 0 };
  const counting: YieldGate = {
    clear: () => gate.clear(),
    requestStarted() {
      told.started += 1;
      gate.requestStarted();
    },
    requestEnded() {
      told.ended += 1;
      gate.requestEnded();
    },
    get inFlight() {
      return gate.inFlight;
    },
  };
  return { gate: counting, told };
}

let slack: SlackStandIn | undefined;
let slackApp: SlackApp | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await slackApp?.stop();
  await slack?.close();
  slackApp = undefined;
  slack = undefined;
});

/** The real receiver (Bolt's HTTPReceiver behind the front server) with `gate`, on a free port. */
async function start(gate: YieldGate, bodyTimeoutMs?: number) {
  slack = await startSlackStandIn();
  const config = readConfig(testEnv(slack, { url: 'http://127.0.0.1:9' }, tempDatabase()));
  const logs: string[] = [];
  const logger = createLogger({ level: 'debug', secrets: secretsOf(config), write: (l) => logs.push(l) });
  const identity = createIdentity(
    createSlackCaller({
      client: new WebClient(config.slack.botToken, slackClientOptions(config, logger, 'web-api')),
      logger,
      redact: createRedactor(secretsOf(config)),
    }),
    logger,
  );
  slackApp = createSlackApp({
    config,
    logger,
    identity,
    isReady: () => true,
    gate,
    ...(bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs }),
  });
  const port = await slackApp.start();
  return { port, app: slackApp.app, logs, base: `http://127.0.0.1:${port}` };
}

/**
 * A stranger's POST to /slack/events that sends its headers and then its body one byte every
 * `everyMs`, never the last byte. Resolves once the headers are written.
 */
async function dribble(port: number, kind: 'unsigned' | 'bad signature' | 'chunked', everyMs = 20) {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const body =
    kind === 'unsigned' ? `ssl_check=1&token=${'x'.repeat(300)}` : JSON.stringify({ pad: 'x'.repeat(300) });
  const headers = [
    'POST /slack/events HTTP/1.1',
    'host: 127.0.0.1',
    `content-type: ${kind === 'unsigned' ? 'application/x-www-form-urlencoded' : 'application/json'}`,
    kind === 'chunked' ? 'transfer-encoding: chunked' : `content-length: ${body.length}`,
    ...(kind === 'unsigned'
      ? []
      : [
          `x-slack-request-timestamp: ${Math.floor(Date.now() / 1000)}`,
          `x-slack-signature: v0=${'0'.repeat(64)}`,
        ]),
  ];
  socket.write(`${headers.join('\r\n')}\r\n\r\n`);
  let response = '';
  socket.setEncoding('utf8');
  socket.on('data', (data: string) => (response += data));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  let sent = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || sent >= body.length - 1) return clearInterval(timer);
    const byte = body[sent++] as string;
    socket.write(kind === 'chunked' ? `1\r\n${byte}\r\n` : byte);
  }, everyMs);
  closed.then(() => clearInterval(timer));
  return { socket, closed, response: () => response, isClosed: () => socket.closed };
}

describe('requests to /slack/events that are not (yet) known to be Slack’s', () => {
  it('slow strangers trickling their bodies do not hold background work back', async () => {
    const { gate, told } = countingGate();
    const { port, base } = await start(gate, 1_500);
    const strangers = await Promise.all([
      dribble(port, 'unsigned'),
      dribble(port, 'unsigned'),
      dribble(port, 'bad signature'),
      dribble(port, 'chunked'),
    ]);
    // Answered after the strangers' headers arrived: the server has read them by now.
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    let passed = false;
    void gate.clear().then(() => (passed = true));
    await waitFor('a background step to pass', () => passed, 1_000);
    expect(strangers.filter((s) => s.isClosed())).toEqual([]);
    expect(gate.inFlight).toBe(0);
    expect(told.started).toBe(0);
  });

  it('a body that never completes is answered 408 and its connection closed after the time-out', async () => {
    const { gate } = countingGate();
    const { port, logs } = await start(gate, 300);
    const startedAt = Date.now();
    const strangers = await Promise.all([dribble(port, 'bad signature'), dribble(port, 'chunked')]);
    await Promise.all(strangers.map((s) => s.closed));
    const took = Date.now() - startedAt;
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(5_000);
    for (const stranger of strangers) expect(stranger.response()).toMatch(/^HTTP\/1\.1 408 /);
    expect(logs.filter((l) => l.includes('body not received in time'))).toHaveLength(2);
    // Slack sends its bodies at once: the default gives a few seconds, no more.
    expect(SLACK_BODY_TIMEOUT_MS).toBeGreaterThanOrEqual(1_000);
    expect(SLACK_BODY_TIMEOUT_MS).toBeLessThanOrEqual(10_000);
  });

  it('a request counts for the gate only once its signature checked out', async () => {
    const { gate, told } = countingGate();
    const { base, app } = await start(gate);
    // A wrong signature, a request without one, and a health check: none of them counts.
    const forged = await postSigned(base, slashCommand({ text: 'Document webhooks' }), {
      secret: 'not-the-signing-secret',
    });
    expect(forged.status).toBe(401);
    const unsigned = await fetch(`${base}/slack/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'ssl_check=1&token=legacy-verification-token',
    });
    expect(unsigned.status).toBe(200);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect(told.started).toBe(0);

    // A signed command counts while its listener works on the answer, and not after.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let listening = false;
    app.command('/docs-agent', async ({ ack }) => {
      listening = true;
      await held;
      await ack();
    });
    const answer = postSigned(base, slashCommand({ text: 'Document webhooks' }));
    await waitFor('the listener to run', () => listening);
    expect(gate.inFlight).toBe(1);
    release();
    expect((await answer).status).toBe(200);
    await waitFor('the request counted as ended', () => gate.inFlight === 0);
    expect(told).toEqual({ started: 1, ended: 1 });
  });
});
