import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../src/logging/logger.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/types.js';
import { warmStart } from '../src/warm-start.js';
import { tempDatabase } from './helpers/harness.js';
import { listen } from './helpers/http.js';

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
