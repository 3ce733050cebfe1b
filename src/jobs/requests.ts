/**
 * What the listeners hand to the job kernel, already parsed and validated: the messages that start
 * a job in their thread, follow-ups and "Try again". Each other place a job starts from keeps its
 * own request beside its recording (`features/<name>/record.ts`).
 */

import type { AccessDecision } from '../access/access-policy.js';
import type { RunSource } from '../domain/keys.js';
import type { SharedFile } from '../slack/messages.js';

/**
 * A message that starts a job in its thread: `@docs-agent <instruction>`, in a channel or inside
 * an existing thread, or a message to the bot in a direct message (`features/messages/record.ts`).
 */
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

/** What a mention (or a direct message) became. */
export type MentionOutcome = { job: number } | { reply: number } | undefined;

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

/**
 * A follow-up to a job from a source that is no message in its thread (a modal's submission, a
 * workflow step), already validated by its listener.
 */
export interface FollowUpRequest {
  /** The job it follows up, as the source named it: not trusted until read back. */
  jobId: number;
  /** What carried it: its run key makes a second delivery of the same source a repeat. */
  source: RunSource;
  /** The author's workspace, when Slack said. */
  teamId: string | undefined;
  userId: string;
  /** What the person asked (Slack mrkdwn). */
  text: string;
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
