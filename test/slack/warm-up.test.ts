import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  WARM_UP_CHANNEL,
  WARM_UP_LANES,
  WARM_UP_REQUESTS,
  WARM_UP_USER,
  warmUpAckPath,
} from '../../src/slack/warm-up.js';
import { SIGNING_SECRET, signature } from '../helpers/signing.js';

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
    await warmUpAckPath({ port: stand.port, signingSecret: SIGNING_SECRET, requests: 20, budgetMs: 60_000 });
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
