// The baseline of the ack-path benchmark: a Bolt app with the same receiver as docs-agent, whose
// `/docs-agent` handler only acknowledges. Prints `{"port": N}` once listening.
import bolt from '@slack/bolt';

const { App, HTTPReceiver, LogLevel } = bolt;
const receiver = new HTTPReceiver({
  signingSecret: process.env.SLACK_SIGNING_SECRET,
  endpoints: '/slack/events',
});
const app = new App({
  receiver,
  authorize: async () => ({ botToken: process.env.SLACK_BOT_TOKEN, botId: 'B0BOT', botUserId: 'U0BOT' }),
  logLevel: LogLevel.ERROR,
  clientOptions: { slackApiUrl: process.env.SLACK_API_URL },
});
app.command('/docs-agent', async ({ ack }) => {
  await ack();
});
const server = await app.start(Number(process.env.PORT ?? 0));
process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
process.on('SIGTERM', () => process.exit(0));
