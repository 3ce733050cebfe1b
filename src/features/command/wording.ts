import { followUpHint, type RenderHints } from '../../blocks/messages.js';
import { codeSpan, joinMrkdwn, type Mrkdwn, md, truncateText } from '../../slack/mrkdwn.js';
import { SUBCOMMANDS } from './subcommands.js';

/** The command's own line in its help, after the subcommands' (`SUBCOMMANDS`). */
const HELP_LINE = md`\`/docs-agent help\` this message`;

/**
 * Every way to use the bot, in a few lines: `/docs-agent help`, and the App Home, which the
 * composition root hands it to. Its last line lists the subcommands, from their table.
 */
export const usage = (hints: RenderHints): Mrkdwn =>
  joinMrkdwn([
    md`*docs-agent* runs the documentation agent on this team's docs and opens a pull request.`,
    md`• \`/docs-agent &lt;instruction&gt;\`: start a job in this channel, e.g. \`/docs-agent Add a quickstart for the Python SDK\``,
    md`• \`@docs-agent &lt;instruction&gt;\`: start a job right where you are; inside a thread, the earlier messages go to the agent as context.`,
    md`• *Send to docs agent* (message menu ⋮ → More message shortcuts): start a job about any message.`,
    md`• ${followUpHint(hints, md`a job’s thread`)}`,
    md`• The status card at the top of the thread shows progress; the outcome and pull request are posted in the thread.`,
    md`• ${joinMrkdwn([...Object.values(SUBCOMMANDS).flatMap((s) => s.help), HELP_LINE], md` · `)}.`,
  ]);

/** What `/docs-agent` answers, privately, when it starts nothing. */
export const commandText = {
  notUnderstood: () => md`:warning: I could not read that command. Please try again.`,
  unknownSubcommand: (word: string, help: Mrkdwn) =>
    md`:information_source: ${codeSpan(truncateText(word, 100))} is not a /docs-agent subcommand, so nothing was started.\n${help}`,
  reportUnavailable: () => md`:warning: I could not read my records just now. Please try again in a moment.`,
  directMessage: () =>
    md`:wave: /docs-agent runs jobs in channels, where the job's thread lets everyone follow along and reply. Run it in a channel I am in (invite me with \`/invite @docs-agent\`), or send me the instruction as a message in my Messages tab. Nothing was started.`,
};
