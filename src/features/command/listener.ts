import type { AllMiddlewareArgs, SlackCommandMiddlewareArgs } from '@slack/bolt';
import type { RenderHints } from '../../blocks/messages.js';
import { acceptInstruction, type InstructionDeps } from './instruction.js';
import { commandSchema } from './payload.js';
import { answerReport, type ReportDeps } from './reports.js';
import { parseCommandText } from './subcommands.js';
import { commandText, usage } from './wording.js';

/** What the command takes: what its subcommands read, and what starting a job takes. */
export type CommandDeps = ReportDeps & InstructionDeps & { hints: RenderHints };

/** `/docs-agent …`: help, a subcommand, or an instruction, each acknowledged within Slack's 3 s. */
export function docsAgentCommand(deps: CommandDeps) {
  return async ({ command, ack }: SlackCommandMiddlewareArgs & AllMiddlewareArgs) => {
    const parsed = commandSchema.safeParse(command);
    if (!parsed.success) {
      deps.logger.warn('slash command payload not understood', {
        issues: parsed.error.issues.map((i) => i.path.join('.')),
      });
      await ack({ response_type: 'ephemeral', text: commandText.notUnderstood() });
      return;
    }
    const body = parsed.data;
    const asked = parseCommandText(body.text);
    switch (asked.kind) {
      case 'help':
        await ack({ response_type: 'ephemeral', text: usage(deps.hints) });
        return;
      case 'unknown_subcommand':
        await ack({
          response_type: 'ephemeral',
          text: commandText.unknownSubcommand(asked.word, usage(deps.hints)),
        });
        return;
      case 'subcommand':
        await answerReport(deps, body, asked, ack);
        return;
      case 'instruction':
        await acceptInstruction(deps, body, asked.text, ack);
        return;
    }
  };
}
