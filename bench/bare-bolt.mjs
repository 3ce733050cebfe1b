// The baseline of the ack benchmarks: a Bolt app as Bolt's own getting-started guide has a user
// write it (token and signing secret, the default receiver and settings), whose `/docs-agent`
// handler only acknowledges. Only the Web API address is set, to reach the Slack stand-in.
// Prints `{"port": N}` once listening.
import bolt from '@slack/bolt';

const app = new bolt.App({
  token: process.env.SLACK_BOT_TOKEN,
  signingSecret: process.env.SLACK_SIGNING_SECRET,
  clientOptions: { slackApiUrl: process.env.SLACK_API_URL },
});
app.command('/docs-agent', async ({ ack }) => {
  await ack();
});
const server = await app.start(Number(process.env.PORT ?? 0));
process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
process.on('SIGTERM', () => process.exit(0));
