import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import type { Logger } from './logging/logger.js';
import type { Identity } from './slack/identity.js';
import { rehearseInserts } from './store/lifecycle.js';
import type { StoreLifecycle } from './store/types.js';
import { withTimeout } from './util/loop.js';

/** Longest start-up waits for Slack's `auth.test` before saying ready anyway, in milliseconds. */
const IDENTITY_WAIT_MS = 500;

/**
 * What start-up does before `/healthz` says ready, so that the first commands cost what later
 * ones do: the insert a command makes rehearsed (and rolled back) until compiled, the connection
 * to Slack opened (bounded: a slow Slack never holds up the start), and signed commands sent
 * through the real receiver from a direct message, where a command starts nothing.
 */
export async function warmStart(options: {
  store: Pick<StoreLifecycle, 'rehearseInsert'>;
  logger: Logger;
  instanceId: string;
  pollIntervalMs: number;
  identity: Pick<Identity, 'get'>;
  port: number;
  /** Set in HTTP mode: the receiver is warmed with requests signed with it. */
  signingSecret: string | undefined;
}): Promise<WarmStart> {
  const started = performance.now();
  const rehearsals = await rehearseInserts(options.store, {
    ...options,
    onError: (error) => options.logger.warn('could not rehearse the insert of a command', { error }),
  });
  await withTimeout(options.identity.get(), IDENTITY_WAIT_MS).catch(() => undefined);
  const requests =
    options.signingSecret === undefined
      ? 0
      : await warmUpAckPath({ port: options.port, signingSecret: options.signingSecret });
  return { rehearsals, requests, ms: Math.round(performance.now() - started) };
}

/** What the warm start did, for the log line that says the app is ready. */
export interface WarmStart {
  /** Inserts rehearsed (and rolled back). */
  rehearsals: number;
  /** Warm-up commands answered by the receiver. */
  requests: number;
  ms: number;
}

/**
 * Commands sent through the ack path before the app says it is ready, at most. The first requests
 * through Bolt cost many times what later ones do (code compiled on first use, then optimised
 * after it has run often, lazily built parsers); paid here, the first commands from Slack cost
 * what the rest do.
 */
export const WARM_UP_REQUESTS = 100;
/**
 * Connections the warm-up sends over at once. Slack opens several: accepting a connection and
 * reading from many sockets are on the path too, and code optimised for one connection only is
 * thrown away again ("deoptimised") by the first burst.
 */
export const WARM_UP_LANES = 5;
/** Longest the warm-up may take, in milliseconds: a slow machine sends fewer and is ready on time. */
export const WARM_UP_BUDGET_MS = 100;
/** Where the warm-up's commands come from: a direct message, where a command starts nothing. */
export const WARM_UP_USER = 'U0WARMUP';
export const WARM_UP_CHANNEL = 'D0WARMUP';

/**
 * Sends `/docs-agent <instruction>` to the app's own `/slack/events`, signed as Slack signs,
 * `requests` times (or until its time is up) over {@link WARM_UP_LANES} kept-alive connections.
 * Each carries every field Slack sends and an instruction with spaces and punctuation, so the
 * code compiled meanwhile fits real commands; sent from a direct message, each is answered with
 * the "run it in a channel" note without touching the store or Slack: nothing is recorded, nothing
 * is posted. Never rejects: a failed warm-up only leaves the first commands slower. Returns how
 * many were answered.
 */
export async function warmUpAckPath(options: {
  port: number;
  signingSecret: string;
  requests?: number;
  budgetMs?: number;
}): Promise<number> {
  const count = options.requests ?? WARM_UP_REQUESTS;
  const deadline = performance.now() + (options.budgetMs ?? WARM_UP_BUDGET_MS);
  let sent = 0;
  let answered = 0;
  let failed = false;
  const lane = async () => {
    while (!failed && sent < count && performance.now() < deadline) {
      const i = sent++;
      // Bounded too: one request that hangs must not hold up the start past the budget.
      const timeoutMs = Math.max(1, deadline - performance.now());
      const ok = await send(options.port, options.signingSecret, i, timeoutMs).catch(() => false);
      if (ok) answered += 1;
      else failed = true;
    }
  };
  await Promise.all(Array.from({ length: Math.min(WARM_UP_LANES, count) }, lane));
  return answered;
}

function send(port: number, secret: string, i: number, timeoutMs: number): Promise<boolean> {
  const timestamp = Math.floor(Date.now() / 1000);
  const body = new URLSearchParams({
    token: 'warm-up',
    team_id: 'T0WARMUP',
    team_domain: 'warm-up',
    channel_id: WARM_UP_CHANNEL,
    channel_name: 'directmessage',
    user_id: WARM_UP_USER,
    user_name: 'warm-up',
    command: '/docs-agent',
    text: `Warm-up #${i}: check the "Quick start" page & its links`,
    api_app_id: 'A0WARMUP',
    is_enterprise_install: 'false',
    response_url: `https://hooks.slack.com/commands/T0WARMUP/${i}/warm-up`,
    trigger_id: `warm-up.${i}`,
  }).toString();
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/slack/events',
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
          'x-slack-request-timestamp': String(timestamp),
          'x-slack-signature': signature,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      },
    );
    req.on('error', reject);
    req.setTimeout(timeoutMs, () => req.destroy(new Error('warm-up request timed out')));
    req.end(body);
  });
}
