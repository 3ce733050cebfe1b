/**
 * What a message is, read from what Slack gives: a person's own or not, whether it mentions the
 * bot, and what a reply asks of the agent. The one home of these rules.
 */

/**
 * Subtypes a person's own message can carry ("Also send to channel", a file with a comment).
 * Everything else (edits, deletions, joins, topic changes, bot messages) is not an instruction:
 * neither when it arrives as an event nor when a thread is read back after a restart.
 */
const HUMAN_SUBTYPES = new Set([undefined, 'thread_broadcast', 'file_share']);

/** Whether a message's subtype is one a person's own message carries. */
export const isHumanMessage = (message: { subtype?: unknown }): boolean =>
  HUMAN_SUBTYPES.has(message.subtype as string | undefined);

/** `<@U123>` or `<@U123|name>` for the given user. */
const mentionOf = (userId: string) => new RegExp(`<@${userId}(\\|[^>]*)?>`, 'g');

/** Whether the text mentions the user. */
export const mentionsUser = (text: string, userId: string) => mentionOf(userId).test(text);

/** The text with every mention of the user taken out (the bot's own name is not an instruction). */
const withoutMention = (text: string, userId: string) =>
  text
    .replace(mentionOf(userId), ' ')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();

/** Whether a reply is an aside: it starts with the marker (empty: asides are off). */
export const isAside = (text: string, marker: string) =>
  marker.length > 0 && text.trimStart().startsWith(marker);

/**
 * What a reply in a job's thread asks of the agent: its text without the bot's mention, or
 * undefined when it is not for the agent (an aside, or, in mention mode, no mention of the bot).
 */
export function followUpText(
  text: string,
  rules: { botUserId: string | undefined; mode: 'all' | 'mention'; asideMarker: string },
): string | undefined {
  const { botUserId } = rules;
  if (rules.mode === 'mention' && !(botUserId && mentionsUser(text, botUserId))) return undefined;
  const instruction = botUserId ? withoutMention(text, botUserId) : text;
  return isAside(instruction, rules.asideMarker) ? undefined : instruction;
}
