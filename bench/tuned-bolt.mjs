// The tuned baseline of the ack benchmarks: a Bolt app set up as docs-agent sets up its own (an
// HTTPReceiver, authorize instead of a token's auth.test, no conversation store, errors only
// logged), whose `/docs-agent` handler only acknowledges. Prints `{"port": N}` once listening.
import bolt from '@slack/bolt';

const { App, HTTPReceiver, LogLevel } = bolt;
const receiver = new HTTPReceiver({
  signingSecret: process.env.SLACK_SIGNING_SECRET,
  endpoints: '/slack/events',
});
const app = new App({
  receiver,
  authorize: async () => ({ botToken: process.env.SLACK_BOT_TOKEN, botId: 'B0BOT', botUserId: 'U0BOT' }),
  convoStore: false,
  logLevel: LogLevel.ERROR,
  clientOptions: { slackApiUrl: process.env.SLACK_API_URL },
});
app.command('/docs-agent', async ({ ack }) => {
  await ack();
});
const server = await app.start(Number(process.env.PORT ?? 0));
process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
process.on('SIGTERM', () => process.exit(0));
