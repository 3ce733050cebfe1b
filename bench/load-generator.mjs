// Load generator for `npm run bench`, run as its own process so that its work does not share an
// event loop with the app under test. Sends correctly signed `/docs-agent` commands over
// kept-alive connections, `concurrency` at a time, and prints one JSON line of results.
//
// Input (JSON in argv[2]): { url, secret, count, concurrency, users, channels, label, first, rate }
//
// Without `rate`, a closed loop: `concurrency` commands in flight, each sent as soon as one is
// answered. With `rate` (commands per second), an open loop: command i is due at start + i / rate
// whether or not earlier ones were answered (at most `concurrency` connections), and its
// `sentAt` is when it was due, so a slow answer that delays later sends counts against them too.
import { createHmac } from 'node:crypto';
import http from 'node:http';

const input = JSON.parse(process.argv[2] ?? '{}');
const target = new URL('/slack/events', input.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: input.concurrency });
const now = () => performance.timeOrigin + performance.now();

/** The i-th command: its own trigger id, person and channel; the prompt names it. */
function command(i) {
  const timestamp = Math.floor(Date.now() / 1000);
  const body = new URLSearchParams({
    token: 'legacy-verification-token',
    team_id: 'T0TEST',
    team_domain: 'test',
    channel_id: `C0BENCH${i % input.channels}`,
    channel_name: 'bench',
    user_id: `U0BENCH${i % input.users}`,
    user_name: 'bench',
    command: '/docs-agent',
    text: `Bench task #${input.label}-${i}#`,
    api_app_id: 'A0APP',
    trigger_id: `trigger.${input.label}.${i}`,
    response_url: `${input.responseBase}/${input.label}-${i}`,
  }).toString();
  const signature = `v0=${createHmac('sha256', input.secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return { body, timestamp, signature };
}

function send(i, dueAt) {
  const { body, timestamp, signature } = command(i);
  return new Promise((resolve) => {
    const sentAt = dueAt ?? now();
    const req = http.request(
      target,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
          'x-slack-request-timestamp': String(timestamp),
          'x-slack-signature': signature,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ i, sentAt, doneAt: now(), status: res.statusCode }));
      },
    );
    req.on('error', (error) => resolve({ i, sentAt, doneAt: now(), status: 0, error: error.code }));
    req.end(body);
  });
}

const results = [];
let next = input.first ?? 0;
const end = next + input.count;
const startedAt = now();
if (input.rate) {
  const first = next;
  const pending = [];
  for (; next < end; next++) {
    const dueAt = startedAt + ((next - first) * 1_000) / input.rate;
    const wait = dueAt - now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(send(next, dueAt).then((r) => results.push(r)));
  }
  await Promise.all(pending);
} else {
  await Promise.all(
    Array.from({ length: input.concurrency }, async () => {
      while (next < end) results.push(await send(next++));
    }),
  );
}
const finishedAt = now();
agent.destroy();
process.stdout.write(`${JSON.stringify({ startedAt, finishedAt, results })}\n`);
