import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../src/logging/logger.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/types.js';
import {
  WARM_UP_CHANNEL,
  WARM_UP_LANES,
  WARM_UP_REQUESTS,
  WARM_UP_USER,
  warmStart,
  warmUpAckPath,
} from '../src/warm-start.js';
import { tempDatabase } from './helpers/harness.js';
import { listen } from './helpers/http.js';
import { signature } from './helpers/signing.js';

const SIGNING_SECRET = 'test-signing-secret-0000';

/** Stands in for the receiver on the bound port: counts the commands and checks each signature. */
async function receiver() {
  const seen = { requests: 0, badlySigned: 0, paths: new Set<string>() };
  const server = await listen((req, body, res) => {
    seen.requests++;
    seen.paths.add(`${req.method} ${req.url}`);
    const timestamp = req.headers['x-slack-request-timestamp'];
    const expected = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    if (req.headers['x-slack-signature'] !== expected) seen.badlySigned++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"run it in a channel"}');
  });
  return { seen, server, port: Number(new URL(server.url).port) };
}

describe('warm start', () => {
  let store: Store | undefined;
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await store?.close();
    await close?.();
    store = undefined;
    close = undefined;
  });

  const logger = (lines: string[] = []) =>
    createLogger({ level: 'debug', secrets: [], write: (l) => lines.push(l) });

  it('in HTTP mode rehearses inserts that leave nothing behind and sends signed commands through the receiver', async () => {
    store = openSqliteStore(tempDatabase());
    const r = await receiver();
    close = r.server.close;
    let identityAsked = 0;
    const done = await warmStart({
      store,
      logger: logger(),
      instanceId: 'instance-warm',
      pollIntervalMs: 5_000,
      identity: {
        get: async () => {
          identityAsked++;
          return undefined;
        },
      },
      port: r.port,
      signingSecret: SIGNING_SECRET,
    });
    expect(done.rehearsals).toBeGreaterThan(0);
    expect(done.requests).toBeGreaterThan(0);
    // A command still on its way when the budget ran out is not counted as answered.
    expect(done.requests).toBeLessThanOrEqual(r.seen.requests);
    expect(r.seen.badlySigned).toBe(0);
    expect([...r.seen.paths]).toEqual(['POST /slack/events']);
    expect(identityAsked).toBe(1);
    expect(done.ms).toBeGreaterThanOrEqual(0);
    // Rolled back: the first real job is the store's first.
    expect(await store.getJob(1)).toBeUndefined();
  });

  it('in Socket Mode sends no request at all', async () => {
    store = openSqliteStore(tempDatabase());
    const r = await receiver();
    close = r.server.close;
    const done = await warmStart({
      store,
      logger: logger(),
      instanceId: 'instance-socket',
      pollIntervalMs: 5_000,
      identity: { get: async () => undefined },
      port: r.port,
      signingSecret: undefined,
    });
    expect(done.requests).toBe(0);
    expect(r.seen.requests).toBe(0);
    expect(done.rehearsals).toBeGreaterThan(0);
  });

  it('says ready after half a second when Slack does not answer who the bot is, and when the store fails', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const lines: string[] = [];
    let asked = false;
    let finished = false;
    const warming = warmStart({
      store: {
        rehearseInsert: async () => {
          throw new Error('database is locked');
        },
      },
      logger: logger(lines),
      instanceId: 'instance-slow',
      pollIntervalMs: 5_000,
      identity: {
        get: () => {
          asked = true;
          return new Promise(() => {});
        },
      },
      port: 1,
      signingSecret: undefined,
    }).then((done) => {
      finished = true;
      return done;
    });
    // The failed rehearsal settles in a few turns of the microtask queue.
    for (let i = 0; i < 100 && !asked; i++) await Promise.resolve();
    expect(asked).toBe(true);
    await vi.advanceTimersByTimeAsync(499);
    expect(finished).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const done = await warming;
    expect(done).toMatchObject({ rehearsals: 0, requests: 0 });
    const warning = JSON.parse(lines[0] as string);
    expect(warning).toMatchObject({ level: 'warn', msg: 'could not rehearse the insert of a command' });
    expect(warning.error.message).toBe('database is locked');
  });
});

describe('the warm-up commands', () => {
  /** A stand-in for the app's own receiver: checks each signature, answers after `delayMs`. */
  async function receiver(delayMs = 0, status = 200) {
    const seen: { path: string; fields: URLSearchParams; port: number | undefined; signed: boolean }[] = [];
    const server: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const timestamp = String(req.headers['x-slack-request-timestamp']);
        seen.push({
          path: req.url ?? '',
          fields: new URLSearchParams(body),
          port: req.socket.remotePort,
          signed: req.headers['x-slack-signature'] === signature(SIGNING_SECRET, timestamp, body),
        });
        setTimeout(() => res.writeHead(status).end(), delayMs);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, seen, port: (server.address() as AddressInfo).port };
  }

  describe('ack path warm-up', () => {
    let server: Server | undefined;
    afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

    it('sends signed instructions from a direct message to /slack/events, as many as asked', async () => {
      const stand = await receiver();
      server = stand.server;
      const answered = await warmUpAckPath({
        port: stand.port,
        signingSecret: SIGNING_SECRET,
        requests: 12,
        budgetMs: 60_000,
      });
      expect(answered).toBe(12);
      expect(stand.seen).toHaveLength(12);
      expect(stand.seen.every((r) => r.path === '/slack/events' && r.signed)).toBe(true);
      for (const { fields } of stand.seen) {
        // Shaped like Slack's own: every field it sends, an instruction with spaces and punctuation.
        expect(fields.get('text')).toMatch(/^Warm-up #\d+: check the "Quick start" page & its links$/);
        expect(fields.get('channel_id')).toBe(WARM_UP_CHANNEL);
        expect(fields.get('channel_name')).toBe('directmessage');
        expect(fields.get('user_id')).toBe(WARM_UP_USER);
        for (const field of ['token', 'team_id', 'team_domain', 'user_name', 'api_app_id', 'response_url'])
          expect(fields.get(field), field).toBeTruthy();
        expect(fields.get('trigger_id')).toMatch(/^warm-up\.\d+$/);
      }
      expect(new Set(stand.seen.map((r) => r.fields.get('trigger_id'))).size).toBe(12);
    });

    it('sends over several connections at once, as Slack does', async () => {
      const stand = await receiver(5);
      server = stand.server;
      await warmUpAckPath({
        port: stand.port,
        signingSecret: SIGNING_SECRET,
        requests: 20,
        budgetMs: 60_000,
      });
      expect(stand.seen).toHaveLength(20);
      expect(new Set(stand.seen.map((r) => r.port)).size).toBe(WARM_UP_LANES);
    });

    it('stops when its time is up, so a slow start is not made slower', async () => {
      const stand = await receiver(30);
      server = stand.server;
      await warmUpAckPath({ port: stand.port, signingSecret: SIGNING_SECRET, budgetMs: 100 });
      expect(stand.seen.length).toBeGreaterThanOrEqual(1);
      expect(stand.seen.length).toBeLessThan(WARM_UP_REQUESTS);
    });

    it('gives up on a request that is not answered within its time', async () => {
      const stand = await receiver(5_000);
      server = stand.server;
      const started = performance.now();
      expect(await warmUpAckPath({ port: stand.port, signingSecret: SIGNING_SECRET, budgetMs: 100 })).toBe(0);
      expect(performance.now() - started).toBeLessThan(2_000);
      server.closeAllConnections();
    });

    it('sends no more once a request is not answered 200', async () => {
      const stand = await receiver(0, 401);
      server = stand.server;
      expect(await warmUpAckPath({ port: stand.port, signingSecret: SIGNING_SECRET, budgetMs: 60_000 })).toBe(
        0,
      );
      // Only the first request of each connection was under way when the first answer came.
      expect(stand.seen.length).toBe(WARM_UP_LANES);
    });
  });
});
