/** What a message is, read from what Slack gives: the one home of this rule. */

/**
 * Subtypes a person's own message can carry ("Also send to channel", a file with a comment).
 * Everything else (edits, deletions, joins, topic changes, bot messages) is not an instruction:
 * neither when it arrives as an event nor when a thread is read back after a restart.
 */
const HUMAN_SUBTYPES = new Set([undefined, 'thread_broadcast', 'file_share']);

/** Whether a message's subtype is one a person's own message carries. */
export const isHumanMessage = (message: { subtype?: unknown }): boolean =>
  HUMAN_SUBTYPES.has(message.subtype as string | undefined);
