import { createHmac } from 'node:crypto';
import { request } from 'node:http';

/**
 * Commands sent through the ack path before the app says it is ready, at most. The first requests
 * through Bolt cost many times what later ones do (code compiled on first use, then optimised
 * after it has run often, lazily built parsers); paid here, the first commands from Slack cost
 * what the rest do.
 */
export const WARM_UP_REQUESTS = 100;
/** Longest the warm-up may take, in milliseconds: a slow machine sends fewer and is ready on time. */
export const WARM_UP_BUDGET_MS = 100;

/**
 * Sends `/docs-agent help` to the app's own `/slack/events`, signed as Slack signs, `requests`
 * times (or until its time is up) over one kept-alive connection. `help` is answered without touching the store or Slack:
 * nothing is recorded, nothing is posted. Never rejects: a failed warm-up only leaves the first
 * commands slower. Returns how many were answered.
 */
export async function warmUpAckPath(options: {
  port: number;
  signingSecret: string;
  requests?: number;
  budgetMs?: number;
}): Promise<number> {
  const count = options.requests ?? WARM_UP_REQUESTS;
  const deadline = performance.now() + (options.budgetMs ?? WARM_UP_BUDGET_MS);
  let answered = 0;
  while (answered < count && performance.now() < deadline) {
    // Bounded too: one request that hangs must not hold up the start past the budget.
    const timeoutMs = Math.max(1, deadline - performance.now());
    const ok = await send(options.port, options.signingSecret, answered, timeoutMs).catch(() => false);
    if (!ok) break;
    answered += 1;
  }
  return answered;
}

function send(port: number, secret: string, i: number, timeoutMs: number): Promise<boolean> {
  const timestamp = Math.floor(Date.now() / 1000);
  const body = new URLSearchParams({
    team_id: 'T0WARMUP',
    channel_id: 'C0WARMUP',
    user_id: 'U0WARMUP',
    command: '/docs-agent',
    text: 'help',
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
