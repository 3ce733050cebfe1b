/**
 * What a message is, and what every message listener reads off one the same way, from what Slack
 * gives: a person's own or not, whether it mentions the bot, and what a reply asks of the agent.
 * The one home of these rules.
 */

import { z } from 'zod';
import { userIdSchema } from './ids.js';

/**
 * Subtypes a person's own message can carry ("Also send to channel", a file with a comment).
 * Everything else (edits, deletions, joins, topic changes, bot messages) is not an instruction:
 * neither when it arrives as an event nor when a thread is read back after a restart.
 */
const HUMAN_SUBTYPES = new Set([undefined, 'thread_broadcast', 'file_share']);

/** Whether a message's subtype is one a person's own message carries. */
export const isHumanMessage = (message: { subtype?: unknown }): boolean =>
  HUMAN_SUBTYPES.has(message.subtype as string | undefined);

/** A file shared with an instruction: the agent API takes text only, so only this reaches it. */
export interface SharedFile {
  /** The file's name as its owner gave it (any text). */
  name: string;
  /** Slack's file type or MIME type, e.g. `pdf`, `image/png`. */
  type: string;
}

/**
 * A message a person wrote, as every message listener reads it. Apps' messages (they carry
 * `bot_id` or `app_id`, also when they mention the bot or edit their own posts) do not parse:
 * they are never instructions.
 */
export const personMessage = z.object({
  user: userIdSchema,
  text: z.string().default(''),
  ts: z.string().min(1),
  thread_ts: z.string().min(1).optional(),
  bot_id: z.undefined().optional(),
  app_id: z.undefined().optional(),
});

/**
 * The bot's user id for an event: from Bolt's context once auth.test has answered, else from
 * the event's own `authorizations` (the installation the event was delivered for), so the
 * first events after a start are read right too.
 */
export function botUserIdOf(context: { botUserId?: string }, body: unknown): string | undefined {
  if (context.botUserId) return context.botUserId;
  const auths = (body as { authorizations?: { user_id?: unknown; is_bot?: unknown }[] }).authorizations;
  const bot = auths?.find((a) => a.is_bot === true && typeof a.user_id === 'string');
  return bot?.user_id as string | undefined;
}

/** An app's message (`bot_id`, or `app_id` also when it carries a user): never an instruction. */
export const fromApp = (event: Record<string, unknown>): boolean =>
  event.bot_id !== undefined || event.app_id !== undefined;

const teamField = (value: unknown) => (typeof value === 'string' && value ? value : undefined);

/**
 * The author's workspace: in a shared channel it may not be the one the event came through.
 * Slack names it in `user_team` and `source_team`; either one is the author's own word.
 */
export const authorTeam = (event: Record<string, unknown>, body: unknown): string | undefined =>
  teamField(event.user_team) ?? teamField(event.source_team) ?? (body as { team_id?: string }).team_id;

const fileSchema = z.looseObject({
  name: z.string().optional(),
  title: z.string().optional(),
  filetype: z.string().optional(),
  mimetype: z.string().optional(),
});

/**
 * The files a message carries (`files`, on a `file_share` message or any other), by name and
 * type; none when there are none or Slack sent something else.
 */
export function sharedFiles(files: unknown): SharedFile[] {
  const parsed = z.array(fileSchema).safeParse(files ?? []);
  if (!parsed.success) return [];
  return parsed.data.map((f) => ({
    name: f.name || f.title || 'unnamed',
    type: f.filetype || f.mimetype || 'unknown type',
  }));
}

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
