/** What the listeners hand to the job service, already parsed and validated. */

import type { AccessDecision } from '../access/access-policy.js';
import type { ChannelAudience } from '../slack/channel-audience.js';
import type { SharedFile } from '../slack/messages.js';

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
  /** Who can read the channel, when the command said (`channel_name`); undefined: Slack is asked. */
  audience?: ChannelAudience | undefined;
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
  /** Files the message carried: the agent gets their names only, and the author is told. */
  files?: SharedFile[];
}

/**
 * A message to the bot in a direct message: at the top (a new job whose thread is the message)
 * or in a thread (the assistant pane's, or under an earlier message). The same facts as a
 * mention: `channelId` is the direct message conversation (`D…`).
 */
export type DirectRequest = MentionRequest;

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
  message: {
    channelId: string;
    ts: string;
    threadTs: string | undefined;
    text: string;
    author: string;
    /** Files the message carries: the agent gets their names only (the modal said so). */
    files?: SharedFile[];
  };
  permalink: string | undefined;
  /** The modal's view id: unique per submission. */
  viewId: string;
  /** Who can read the chosen channel, as Slack said when the modal was submitted; undefined: asked again. */
  audience?: ChannelAudience | undefined;
}

/** A Workflow Builder step "Start a docs agent job", its inputs already validated. */
export interface StepRequest {
  teamId: string;
  /** On whose behalf: every check is made for this person. */
  userId: string;
  /** Where the status card and the job's thread go. */
  channelId: string;
  /** A message of that channel to start the job's thread under; undefined: a new thread. */
  threadTs: string | undefined;
  /** The instruction as the workflow gave it (Slack-encoded, like a command's). */
  instruction: string;
  /** A documentation project the deployment serves; undefined: the channel's. */
  projectId: string | undefined;
  /** Slack's `function_execution_id`: unique per run of the step, so a repeat starts nothing. */
  executionId: string;
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
  /** Files the message carried: the agent gets their names only, and the author is told. */
  files?: SharedFile[];
}

/** A click on a status card's "Try again" button, already parsed by its listener. */
export interface RetryRequest {
  /** The job whose card carried the button: the click's value, not trusted until read back. */
  jobId: number;
  /** The person who clicked, and their own workspace: the new job's requester. */
  userId: string;
  teamId: string;
  /** Where the card is: the click must come from the job's own channel. */
  channelId: string;
  /** The click's response_url (private answers to the person, for 30 minutes). */
  responseUrl: string | null;
}

/**
 * What a click on "Try again" became: the new job; `refused` when the person may not instruct
 * the agent where the job was asked, or their (or the project's) hourly limit is reached, before
 * anything is recorded; `repeat` when that job was tried again already
 * (a double click, a re-delivery, someone else's click); `not_retryable` when the job cannot be
 * tried again (it is not one whose start or run failed, or it moved on meanwhile).
 */
export type RetryOutcome =
  | { job: number }
  | { refused: Extract<AccessDecision, { allowed: false }> }
  | 'repeat'
  | 'not_retryable';
