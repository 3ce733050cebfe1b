import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { App } from '@slack/bolt';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { RETRY_ACTION_ID } from '../../src/blocks/status-card.js';
import {
  type BodyRead,
  MAX_BODY_BYTES,
  MAX_CLOCK_SKEW_S,
  readBody,
  SLACK_BODY_TIMEOUT_MS,
  screenRequest,
  screenRequests,
  signedBySlack,
} from '../../src/http/screening.js';
import { registerListeners } from '../../src/listeners/index.js';
import { type ListenerApp, startListenerApp } from '../helpers/listener-app.js';
import { createListenerWorld, type ListenerWorld } from '../helpers/listener-deps.js';
import { buttonClick, messageShortcut, viewSubmission } from '../helpers/payloads.js';
import { SIGNING_SECRET, signature } from '../helpers/signing.js';

/**
 * Interactivity as Slack sends it, signed, to the real receiver with every listener registered
 * (the payloads are those of Slack's reference pages, from test/helpers/payloads.ts), and the
 * same payloads missing what Bolt reads before any listener runs.
 */
let w: ListenerWorld;
let app: ListenerApp;
beforeAll(async () => {
  w = createListenerWorld();
  app = await startListenerApp(w, registerListeners);
});
afterAll(async () => {
  await app.stop();
  await w.stop();
});
let logsBefore = 0;
beforeEach(() => {
  logsBefore = w.logs.length;
});
const newLogs = () => w.logs.slice(logsBefore);
const linesWith = (text: string) => newLogs().filter((l) => l.includes(text));

/** Words a person might have written, which no log line may carry. */
const WORDS = 'my private words <!channel>';
const click = () =>
  buttonClick({ action_id: RETRY_ACTION_ID, value: '1' }, { messageTs: '1700000000.000001' });
const without = (payload: Record<string, unknown>, ...keys: string[]) =>
  Object.fromEntries(Object.entries(payload).filter(([k]) => !keys.includes(k)));

describe('interactivity Bolt cannot read', () => {
  it.each([
    ['a click without `user`', () => without(click(), 'user'), 'block_actions', ['user: invalid_type']],
    [
      'a click without `actions`',
      () => without(click(), 'actions'),
      'block_actions',
      ['actions: invalid_type'],
    ],
    ['a click with no action', () => ({ ...click(), actions: [] }), 'block_actions', ['actions: too_small']],
    [
      'a click whose action has no id',
      () => ({ ...click(), actions: [{ type: 'button', value: WORDS }] }),
      'block_actions',
      ['actions.0.action_id: invalid_type'],
    ],
    [
      'a click whose channel is null',
      () => ({ ...click(), channel: null }),
      'block_actions',
      ['channel: invalid_type'],
    ],
    [
      'a message shortcut without `user`',
      () => without(messageShortcut({ ts: '1700000000.000002', text: WORDS }), 'user'),
      'message_action',
      ['user: invalid_type'],
    ],
    [
      'a modal submission without `view`',
      () =>
        without(viewSubmission({ callback_id: 'send_to_docs_agent_modal' }, { instruction: WORDS }), 'view'),
      'view_submission',
      ['view: invalid_type'],
    ],
    [
      'a payload of a type this app does not read',
      () => ({ ...click(), type: 'something_new' }),
      'something_new',
      ['type: not_read'],
    ],
  ])(
    '%s is answered 200 at once, logged once by its failing fields, and reaches no listener',
    async (_what, payload, type, fields) => {
      const res = await app.interact({ ...payload(), note: WORDS });
      expect(res.status).toBe(200);
      const [line, ...more] = linesWith('a request from Slack could not be read');
      expect(more).toEqual([]);
      expect(JSON.parse(line as string)).toMatchObject({ level: 'warn', type, fields });
      // Nothing of Bolt's own failure, and nothing a person wrote.
      expect(newLogs().filter((l) => /"level":"(warn|error)"/.test(l))).toHaveLength(1);
      expect(newLogs().join('\n')).not.toContain('private words');
      expect(w.slack.respond).not.toHaveBeenCalled();
      expect(w.slack.openView).not.toHaveBeenCalled();
      expect(w.jobCount()).toBe(0);
    },
  );

  it('an event that is not an object is answered 200 and logged, not failed inside Bolt', async () => {
    const res = await app.json({ type: 'event_callback', team_id: 'T0TEST', event: WORDS, event_id: 'Ev1' });
    expect(res.status).toBe(200);
    expect(JSON.parse(linesWith('could not be read')[0] as string).fields).toEqual(['event: invalid_type']);
  });

  it('a well-formed click on a button no listener handles is answered at once, and said', async () => {
    const res = await app.interact(
      buttonClick({ action_id: 'a_retired_button', value: 'x' }, { messageTs: '1.2' }),
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(linesWith('no listener answered')[0] as string)).toMatchObject({
      type: 'block_actions',
    });
  });

  it('hands a readable payload to its listener as before', async () => {
    const res = await app.interact(
      messageShortcut({ ts: '1700000000.000003', text: 'How do I rotate keys?' }),
    );
    expect(res.status).toBe(200);
    expect(w.slack.openView).toHaveBeenCalledOnce();
    expect(linesWith('could not be read')).toEqual([]);
    expect(linesWith('no listener answered')).toEqual([]);
  });
});

describe('screenRequests', () => {
  it('passes on a listener’s own failure, so the receiver still answers it as failed', async () => {
    const failing: Pick<App, 'processEvent'> = {
      processEvent: () => Promise.reject(new Error('listener bug')),
    };
    screenRequests(failing, w.ctx.logger);
    let acked = false;
    const ack = async () => {
      acked = true;
    };
    await expect(failing.processEvent({ body: { command: '/docs-agent' }, ack } as never)).rejects.toThrow(
      'listener bug',
    );
    expect(acked).toBe(false);
  });
});

const NOW_MS = 1_700_000_000_000;
const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
const signed = (extra: Record<string, string> = {}) =>
  request({
    'x-slack-signature': 'v0=abc',
    'x-slack-request-timestamp': String(NOW_MS / 1000),
    'content-type': 'application/json',
    'content-length': '100',
    ...extra,
  });

describe('screenRequest', () => {
  it('lets a signed, timely, small body of a known type through', () => {
    expect(screenRequest(signed(), NOW_MS)).toBeUndefined();
    expect(
      screenRequest(signed({ 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }), NOW_MS),
    ).toBeUndefined();
  });

  it("lets only a small unsigned form through, as Slack's ssl_check", () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '40' };
    expect(screenRequest(request(form), NOW_MS)).toBeUndefined();
    expect(screenRequest(request({ ...form, 'content-length': '4096' }), NOW_MS)?.status).toBe(401);
    expect(
      screenRequest(request({ 'content-type': 'application/json', 'content-length': '40' }), NOW_MS)?.status,
    ).toBe(401);
  });

  it('refuses a timestamp outside the allowed skew either way', () => {
    const at = (s: number) => signed({ 'x-slack-request-timestamp': String(s) });
    expect(screenRequest(at(NOW_MS / 1000 + MAX_CLOCK_SKEW_S + 1), NOW_MS)?.status).toBe(401);
    expect(screenRequest(at(NOW_MS / 1000 - MAX_CLOCK_SKEW_S - 1), NOW_MS)?.status).toBe(401);
    expect(screenRequest(at(NOW_MS / 1000 - MAX_CLOCK_SKEW_S), NOW_MS)).toBeUndefined();
  });

  it('refuses unknown body types and bodies over the limit', () => {
    expect(screenRequest(signed({ 'content-type': 'text/plain' }), NOW_MS)?.status).toBe(415);
    expect(screenRequest(signed({ 'content-length': String(MAX_BODY_BYTES + 1) }), NOW_MS)?.status).toBe(413);
  });
});

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
    const req = httpRequest({ host: '127.0.0.1', port, path: '/slack/events', method: 'POST', headers });
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
