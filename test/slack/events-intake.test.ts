import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type BodyRead,
  readBody,
  SLACK_BODY_TIMEOUT_MS,
  signedBySlack,
} from '../../src/slack/events-intake.js';
import { SIGNING_SECRET, signature } from '../helpers/signing.js';

interface Seen {
  read: BodyRead;
  /** Listeners readBody left on the request once it answered. */
  listening: number;
  signed: boolean | undefined;
}

let server: Server | undefined;
afterEach(async () => {
  vi.useRealTimers();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

const listeners = (req: IncomingMessage) =>
  ['data', 'end', 'error', 'close'].reduce((n, event) => n + req.listenerCount(event), 0);

/** The app's side of /slack/events: reads each body as the receiver does, then checks it. */
async function intake(limitBytes = 1_000, timeoutMs = SLACK_BODY_TIMEOUT_MS) {
  const seen: Seen[] = [];
  const arrivals: (() => void)[] = [];
  let arrived = new Promise<void>((resolve) => arrivals.push(resolve));
  const results: (() => void)[] = [];
  let answered = new Promise<void>((resolve) => results.push(resolve));
  server?.closeAllConnections();
  server?.close();
  server = createServer((req, res) => {
    const before = listeners(req);
    const reading = readBody(req, { limitBytes, timeoutMs });
    arrivals.shift()?.();
    arrived = new Promise<void>((resolve) => arrivals.push(resolve));
    void reading.then((read) => {
      const signed = read.kind === 'body' ? signedBySlack(req, read.body, SIGNING_SECRET) : undefined;
      seen.push({ read, listening: listeners(req) - before, signed });
      results.shift()?.();
      answered = new Promise<void>((resolve) => results.push(resolve));
      if (!res.destroyed) res.writeHead(read.kind === 'body' ? 200 : 408).end();
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  /** Starts a POST; the caller writes its body. */
  const post = (headers: Record<string, string> = {}) => {
    const req = request({ host: '127.0.0.1', port, path: '/slack/events', method: 'POST', headers });
    req.on('error', () => {});
    return req;
  };
  return { seen, post, arrived: () => arrived, answered: () => answered };
}

/** Headers Slack signs a body with, at `timestamp` (seconds). */
const signedHeaders = (body: string, timestamp = Math.floor(Date.now() / 1000), secret = SIGNING_SECRET) => ({
  'content-type': 'application/x-www-form-urlencoded',
  'x-slack-request-timestamp': String(timestamp),
  'x-slack-signature': signature(secret, timestamp, body),
});

describe('reading a body sent to /slack/events', () => {
  it('reads a whole body up to its limit, and stops listening to the request', async () => {
    const app = await intake(10);
    const answered = app.answered();
    app.post().end('0123456789');
    await answered;
    expect(app.seen[0]?.read).toEqual({ kind: 'body', body: Buffer.from('0123456789') });
    expect(app.seen[0]?.listening).toBe(0);
  });

  it('gives up on a body over its limit', async () => {
    const app = await intake(10);
    const answered = app.answered();
    app.post().end('0123456789A');
    await answered;
    expect(app.seen[0]?.read).toEqual({ kind: 'too_large' });
    expect(app.seen[0]?.listening).toBe(0);
  });

  it('gives up on a body still arriving after its time-out, not before', async () => {
    const app = await intake(1_000, 3_000);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const arrived = app.arrived();
    const req = app.post({ 'content-length': '100' });
    req.write('token=trickling');
    await arrived;
    await vi.advanceTimersByTimeAsync(2_999);
    expect(app.seen).toEqual([]);
    const answered = app.answered();
    await vi.advanceTimersByTimeAsync(1);
    await answered;
    expect(app.seen[0]?.read).toEqual({ kind: 'timeout' });
    expect(app.seen[0]?.listening).toBe(0);
    req.destroy();
  });

  it('notices a client that goes away before its body is in', async () => {
    const app = await intake();
    const arrived = app.arrived();
    const answered = app.answered();
    const req = app.post({ 'content-length': '100' });
    req.write('half a bo');
    await arrived;
    req.destroy();
    await answered;
    expect(app.seen[0]?.read).toEqual({ kind: 'aborted' });
    expect(app.seen[0]?.listening).toBe(0);
  });

  it('waits as long as Slack itself waits for an answer', () => {
    expect(SLACK_BODY_TIMEOUT_MS).toBe(3_000);
  });
});

describe('whether Slack signed a body', () => {
  const body = 'command=%2Fdocs&text=fix+the+intro&user_id=U0ALICE';
  const now = () => Math.floor(Date.now() / 1000);

  /** Sends `sent` to a fresh intake with these headers; whether it counted as Slack's. */
  async function signedAs(headers: Record<string, string>, sent = body) {
    const app = await intake();
    const answered = app.answered();
    app.post(headers).end(sent);
    await answered;
    return app.seen.at(-1)?.signed;
  }

  it('takes a body signed with the signing secret within five minutes', async () => {
    expect(await signedAs(signedHeaders(body))).toBe(true);
    expect(await signedAs(signedHeaders(body, now() - 4 * 60))).toBe(true);
  });

  it('refuses a wrong secret, a changed body, or an old timestamp', async () => {
    expect(await signedAs(signedHeaders(body, now(), 'not-the-signing-secret'))).toBe(false);
    expect(await signedAs(signedHeaders(body), `${body}&is_admin=true`)).toBe(false);
    expect(await signedAs(signedHeaders(body, now() - 6 * 60))).toBe(false);
  });

  it('refuses a request missing either header, or with a timestamp that is not a number', async () => {
    const { 'x-slack-signature': sig, 'x-slack-request-timestamp': ts, ...rest } = signedHeaders(body);
    expect(await signedAs({ ...rest, 'x-slack-request-timestamp': ts })).toBe(false);
    expect(await signedAs({ ...rest, 'x-slack-signature': sig })).toBe(false);
    expect(await signedAs({ ...rest, 'x-slack-signature': sig, 'x-slack-request-timestamp': 'soon' })).toBe(
      false,
    );
    expect(await signedAs({ ...rest, 'x-slack-signature': 'v1=abc', 'x-slack-request-timestamp': ts })).toBe(
      false,
    );
  });
});
