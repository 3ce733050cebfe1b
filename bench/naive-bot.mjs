// The baseline of the CPU-per-job benchmark: a naive bot, as a first version would be. Bolt with
// the same receiver as docs-agent; `/docs-agent <text>` is acknowledged, then the root message is
// posted and the job created upstream; every interval it GETs every job it has not yet seen end,
// all at once, and posts the outcome in the job's thread. Nothing is stored: a restart loses
// everything. Prints `{"port": N}` once listening.
//
// Environment: SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN, SLACK_API_URL, DOCS_AGENT_API_URL,
// DOCS_AGENT_API_KEY, DOCS_AGENT_PROJECT_ID, POLL_INTERVAL_MS, PORT.
import bolt from '@slack/bolt';

const { App, HTTPReceiver, LogLevel } = bolt;
const env = process.env;
const api = `${env.DOCS_AGENT_API_URL}/v2/agent/${env.DOCS_AGENT_PROJECT_ID}`;
const headers = { authorization: `Bearer ${env.DOCS_AGENT_API_KEY}`, 'content-type': 'application/json' };
const receiver = new HTTPReceiver({ signingSecret: env.SLACK_SIGNING_SECRET, endpoints: '/slack/events' });
const app = new App({
  receiver,
  authorize: async () => ({ botToken: env.SLACK_BOT_TOKEN, botId: 'B0BOT', botUserId: 'U0BOT' }),
  logLevel: LogLevel.ERROR,
  clientOptions: { slackApiUrl: env.SLACK_API_URL },
});
/** Jobs not yet seen ending: { id, channel, threadTs }. */
const open = new Set();

app.command('/docs-agent', async ({ command, ack, client }) => {
  await ack();
  try {
    const root = await client.chat.postMessage({
      channel: command.channel_id,
      text: `Working on: ${command.text}`,
    });
    const res = await fetch(`${api}/job`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ prompt: command.text }),
    });
    const job = await res.json();
    open.add({ id: job.id, channel: command.channel_id, threadTs: root.ts });
  } catch {
    // A naive bot drops what fails.
  }
});

async function poll(job) {
  try {
    const res = await fetch(`${api}/job/${job.id}`, { headers });
    const body = await res.json();
    if (body.status === 'active' || !open.delete(job)) return;
    await app.client.chat.postMessage({
      token: env.SLACK_BOT_TOKEN,
      channel: job.channel,
      thread_ts: job.threadTs,
      text: `Done: ${body.prLink}`,
    });
  } catch {
    // Tried again next interval.
  }
}

setInterval(
  () => {
    for (const job of open) void poll(job);
  },
  Number(env.POLL_INTERVAL_MS ?? 10_000),
);
const server = await app.start(Number(env.PORT ?? 0));
process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
process.on('SIGTERM', () => process.exit(0));
