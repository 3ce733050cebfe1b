import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WARM_UP_REQUESTS, warmUpAckPath } from '../../src/slack/warm-up.js';
import { SIGNING_SECRET, signature } from '../helpers/signing.js';

/** A stand-in for the app's own receiver: checks each signature, answers after `delayMs`. */
async function receiver(delayMs = 0, status = 200) {
  const seen: { path: string; text: string | null; signed: boolean }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const timestamp = String(req.headers['x-slack-request-timestamp']);
      seen.push({
        path: req.url ?? '',
        text: new URLSearchParams(body).get('text'),
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

  it('sends signed `help` commands to /slack/events, as many as asked', async () => {
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
    expect(stand.seen.every((r) => r.path === '/slack/events' && r.text === 'help' && r.signed)).toBe(true);
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

  it('stops at the first request that is not answered 200', async () => {
    const stand = await receiver(0, 401);
    server = stand.server;
    expect(await warmUpAckPath({ port: stand.port, signingSecret: SIGNING_SECRET, budgetMs: 60_000 })).toBe(
      0,
    );
    expect(stand.seen).toHaveLength(1);
  });
});
