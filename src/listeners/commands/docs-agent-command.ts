import type { AllMiddlewareArgs, SlackCommandMiddlewareArgs } from '@slack/bolt';
import { text, usage } from '../../blocks/messages.js';
import { parseCommandText } from '../../jobs/command-text.js';
import { md } from '../../slack/mrkdwn.js';
import type { ListenerDeps } from '../types.js';
import { commandSchema } from './command-payload.js';
import { acceptInstruction, type InstructionDeps } from './instruction.js';
import { answerReport, type ReportDeps } from './reports.js';

/** `/docs-agent …`: help, a report, or an instruction, each acknowledged within Slack's 3 s. */
export function docsAgentCommand(
  deps: Pick<ListenerDeps, 'hints' | 'logger'> & ReportDeps & InstructionDeps,
) {
  return async ({ command, ack }: SlackCommandMiddlewareArgs & AllMiddlewareArgs) => {
    const parsed = commandSchema.safeParse(command);
    if (!parsed.success) {
      deps.logger.warn('slash command payload not understood', {
        issues: parsed.error.issues.map((i) => i.path.join('.')),
      });
      await ack({
        response_type: 'ephemeral',
        text: md`:warning: I could not read that command. Please try again.`,
      });
      return;
    }
    const body = parsed.data;
    const parsedText = parseCommandText(body.text);
    switch (parsedText.kind) {
      case 'help':
        await ack({ response_type: 'ephemeral', text: usage(deps.hints) });
        return;
      case 'unknown_subcommand':
        await ack({
          response_type: 'ephemeral',
          text: text.unknownSubcommand(parsedText.word, usage(deps.hints)),
        });
        return;
      case 'list':
      case 'status':
        await answerReport(deps, body, parsedText, ack);
        return;
      case 'instruction':
        await acceptInstruction(deps, body, parsedText.text, ack);
        return;
    }
  };
}
