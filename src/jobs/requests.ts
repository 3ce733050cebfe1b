/** What the listeners hand to the job service, already parsed and validated. */

/** A `/docs-agent <instruction>` command, already validated by its listener. */
export interface StartRequest {
  teamId: string;
  channelId: string;
  userId: string;
  /** The instruction as typed (Slack mrkdwn). */
  text: string;
  /** Slack's trigger id: unique per invocation, so a repeat never starts a second job. */
  triggerId: string;
  responseUrl: string | null;
}

/** `@docs-agent <instruction>`: in a channel, or inside an existing thread. */
export interface MentionRequest {
  teamId: string;
  channelId: string;
  userId: string;
  /** The instruction with the bot's mention taken out (Slack mrkdwn). */
  text: string;
  messageTs: string;
  /** The thread the mention was posted in, if any. */
  threadTs: string | undefined;
}

/**
 * A message to the bot in a direct message: at the top (a new job whose thread is the message)
 * or in a thread (the assistant pane's, or under an earlier message).
 */
export interface DirectRequest {
  teamId: string;
  /** The direct message conversation (`D…`). */
  channelId: string;
  userId: string;
  /** The message as typed (Slack mrkdwn), the bot's mention taken out. */
  text: string;
  messageTs: string;
  /** The thread the message was posted in, if any. */
  threadTs: string | undefined;
}

/** What a mention (or a direct message) became. */
export type MentionOutcome = { job: number } | { reply: number } | undefined;

/** The message shortcut's modal, submitted and validated. */
export interface ShortcutRequest {
  teamId: string;
  userId: string;
  /** Where the job runs: the message's own channel (then in its thread) or one the user picked. */
  channelId: string;
  /** The instruction typed in the modal, Slack-encoded (`&`, `<`, `>` escaped) like a command's. */
  instruction: string;
  /** The message the shortcut was used on, as the user left it in the modal (Slack-encoded). */
  message: { channelId: string; ts: string; threadTs: string | undefined; text: string; author: string };
  permalink: string | undefined;
  /** The modal's view id: unique per submission. */
  viewId: string;
}

/** A human reply in some thread, already filtered by its listener. */
export interface ReplyRequest {
  /** The author's workspace (differs from ours in a shared channel). */
  teamId: string | undefined;
  channelId: string;
  threadTs: string;
  messageTs: string;
  userId: string;
  text: string;
  /**
   * The reply mentions the bot: in a thread whose job never ran, the mention starts a new job
   * (the app_mention event), so the reply is not the old job's follow-up.
   */
  mentionsBot?: boolean;
}
