/**
 * What a Slack id is, read from its form (a person's, a workspace's, an organisation's), and what a
 * conversation is, read from its id or name: the one home of these rules. And the ids every button
 * click carries alike (who clicked, where), read by one schema.
 */

import { z } from 'zod';

/** Slack ids are upper-case letters and digits; anything else is shown, never parsed. */
export const SLACK_ID = /^[A-Z0-9]{2,40}$/;

/**
 * A person's id: `U…`, or `W…` for an Enterprise Grid account (what Slack gives a person of an
 * organisation in every workspace of it). An app's own name, which may be any text, is none.
 */
export const isUserId = (id: string): boolean => SLACK_ID.test(id) && /^[UW]/.test(id);

/** A workspace's id: `T…`. */
export const isTeamId = (id: string): boolean => SLACK_ID.test(id) && id.startsWith('T');

/** An Enterprise Grid organisation's id: `E…`. */
export const isEnterpriseId = (id: string): boolean => SLACK_ID.test(id) && id.startsWith('E');

/**
 * A person's id in a payload, for the listeners' schemas: anything else fails the parse (and is
 * logged by its field name), so it is never looked up, addressed (`chat.postEphemeral`,
 * `views.publish`) or written back into a message as a mention.
 */
export const userIdSchema = z.string().refine(isUserId, { message: 'not a user id' });

/** What the bot needs to know about a conversation before it starts a job there. */
export interface ConversationFacts {
  isMember: boolean;
  isArchived: boolean;
  /** A direct message or group direct message. */
  isDirect: boolean;
  /**
   * Only its members can read it: a private channel, a direct message or a group direct message.
   * True unless Slack says outright that the channel is not private.
   */
  isPrivate: boolean;
}

/**
 * A direct message with the bot (its App Home "Messages" tab, or the assistant pane). Slack
 * gives one-to-one conversations ids starting with `D`.
 */
export const isDirectMessage = (channelId: string): boolean => channelId.startsWith('D');

/**
 * A one-to-one or group direct message, as a slash command reports it: by its id, or by the name
 * Slack gives such conversations (`directmessage`, `mpdm`), since a group DM's id looks like a
 * private channel's.
 */
export const isDirectConversation = (channelId: string, channelName?: string): boolean =>
  isDirectMessage(channelId) || channelName === 'directmessage' || channelName === 'mpdm';

/**
 * What a slash command's `channel_name` says of who can read the conversation: Slack names a
 * private channel `privategroup` (and direct messages as above). Any other name says nothing
 * sure, so Slack is asked (undefined).
 */
export const privateByChannelName = (channelName: string | undefined): 'private' | undefined =>
  channelName === 'privategroup' || channelName === 'directmessage' || channelName === 'mpdm'
    ? 'private'
    : undefined;

/**
 * A conversation the bot cannot be invited to with `/invite`: a direct message, or a group
 * direct message or legacy private group (ids starting with `G`).
 */
export const isPrivateConversation = (channelId: string): boolean =>
  isDirectMessage(channelId) || channelId.startsWith('G');

/** The entities Slack names a channel with in an agent's context: a channel, or a message in one. */
const CHANNEL_ENTITY = 'slack#/types/channel_id';
const MESSAGE_ENTITY = 'slack#/types/message_context';

const channelId = z.string().regex(SLACK_ID);
/** What the person is looking at: entities ordered by relevance; `{}` when nothing is in view. */
const contextSchema = z.object({
  entities: z
    .array(z.looseObject({ type: z.unknown(), value: z.unknown() }))
    .optional()
    .catch(undefined),
});

/**
 * The channel the person is beside, read from an agent's context (`context` of
 * `app_context_changed`, `app_context` of a message to the bot): the most relevant entity that
 * names one, a channel or a message in a channel (a thread). Null when none does, or the context
 * cannot be read; entities this app does not use are passed over.
 */
export function besideChannel(context: unknown): string | null {
  const parsed = contextSchema.safeParse(context);
  for (const entity of parsed.success ? (parsed.data.entities ?? []) : []) {
    const value =
      entity.type === CHANNEL_ENTITY
        ? entity.value
        : entity.type === MESSAGE_ENTITY
          ? (entity.value as { channel_id?: unknown } | null)?.channel_id
          : undefined;
    const channel = channelId.safeParse(value);
    if (channel.success) return channel.data;
  }
  return null;
}

/**
 * Who clicked, where, and where to answer them: the part of a `block_actions` payload every
 * button's listener reads the same way. Each listener extends it with its own `actions`.
 */
export const clickSchema = z.object({
  // `null` in an organisation-wide install, where the person's workspace is `user.team_id`.
  team: z
    .object({ id: z.string().min(1) })
    .nullable()
    .optional(),
  user: z.object({ id: userIdSchema, team_id: z.string().min(1).optional() }),
  channel: z.object({ id: z.string().min(1) }),
  // Private answers to the person who clicked, for 30 minutes.
  response_url: z.string().url().optional(),
});

export type Click = z.infer<typeof clickSchema>;

/**
 * The workspace of the person who clicked: their own (`user.team_id`, which an Enterprise Grid
 * payload carries while `team` is null), else the payload's; undefined when Slack said neither.
 */
export const clickersTeam = (click: Pick<Click, 'team' | 'user'>): string | undefined =>
  click.user.team_id ?? click.team?.id;
