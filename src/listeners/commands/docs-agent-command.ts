import type { AllMiddlewareArgs, SlackCommandMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { parseCommandText } from '../../jobs/command-text.js';
import { text, USAGE } from '../../jobs/messages.js';
import type { ListenerDeps } from '../types.js';

const commandSchema = z.object({
  text: z.string().default(''),
  user_id: z.string().min(1),
  channel_id: z.string().min(1),
  team_id: z.string().min(1),
  trigger_id: z.string().min(1),
  response_url: z.string().url().optional(),
  channel_name: z.string().optional(),
});

/** Direct messages: the bot does not receive thread replies there, so a job could not be steered. */
const isDirectMessage = (channelId: string, channelName: string | undefined) =>
  channelId.startsWith('D') || channelName === 'directmessage' || channelName === 'mpdm';

/** `/docs-agent <instruction>`: acknowledge at once, then start the job in the background. */
export function docsAgentCommand(deps: ListenerDeps) {
  return async ({ command, ack }: SlackCommandMiddlewareArgs & AllMiddlewareArgs) => {
    const parsed = commandSchema.safeParse(command);
    if (!parsed.success) {
      deps.logger.warn('slash command payload not understood', {
        issues: parsed.error.issues.map((i) => i.path.join('.')),
      });
      await ack({
        response_type: 'ephemeral',
        text: ':warning: I could not read that command. Please try again.',
      });
      return;
    }
    const body = parsed.data;
    const parsedText = parseCommandText(body.text);
    if (parsedText.kind === 'help') {
      await ack({ response_type: 'ephemeral', text: USAGE });
      return;
    }
    if (parsedText.kind === 'unknown_subcommand') {
      await ack({ response_type: 'ephemeral', text: text.unknownSubcommand(parsedText.word) });
      return;
    }
    if (isDirectMessage(body.channel_id, body.channel_name)) {
      await ack({ response_type: 'ephemeral', text: text.directMessage() });
      return;
    }
    // Recorded before the acknowledgement: once Slack shows the command as sent, a crash cannot
    // lose it (the next start carries on or explains).
    let jobId: number | undefined;
    try {
      jobId = await deps.jobs.acceptCommand({
        teamId: body.team_id,
        channelId: body.channel_id,
        userId: body.user_id,
        text: parsedText.text,
        triggerId: body.trigger_id,
        responseUrl: body.response_url ?? null,
      });
    } catch (error) {
      deps.logger.error('could not record a command', { error });
      await ack({ response_type: 'ephemeral', text: text.notRecorded() });
      return;
    }
    await ack();
    if (jobId !== undefined) {
      const id = jobId;
      deps.tasks.run('start job', () => deps.jobs.startJob(id));
    }
  };
}
