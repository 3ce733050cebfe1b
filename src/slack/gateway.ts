import type { SlackCaller } from './caller.js';
import { POST_MAX_RATE_LIMIT_WAIT_MS, SlackCallError } from './caller.js';
import type { ConversationFacts } from './ids.js';
import {
  eventPayload,
  LISTING_PAGES,
  listingReads,
  type PostMetadata,
  type ThreadMessage,
} from './message-listing.js';
import type { Mrkdwn } from './mrkdwn.js';

export interface SlackUser {
  /** The name people see: display name, else real name, else the account name. */
  name: string;
  /** Multi-channel guest. */
  isRestricted: boolean;
  /** Single-channel guest. */
  isUltraRestricted: boolean;
  isBot: boolean;
  deleted: boolean;
  /** The person's own workspace, when Slack says (another organisation's, for a Slack Connect member). */
  teamId: string | undefined;
  /** The person's Enterprise Grid organisation (`enterprise_user.enterprise_id`), when they belong to one. */
  enterpriseId?: string | undefined;
}

/** Block Kit blocks (checked against Slack's limits where they are built). */
export type Blocks = ReadonlyArray<Record<string, unknown>>;

/**
 * The Slack calls the bot makes, through the one caller (`caller.ts`): every text it shows people
 * masked, errors turned into {@link SlackCallError}.
 */
export interface SlackGateway {
  postMessage(args: {
    channel: string;
    threadTs?: string;
    text: Mrkdwn;
    blocks?: Blocks;
    metadata?: PostMetadata;
  }): Promise<string>;
  updateMessage(args: { channel: string; ts: string; text: Mrkdwn; blocks?: Blocks }): Promise<void>;
  addReaction(args: { channel: string; ts: string; name: string }): Promise<void>;
  /** Removes the bot's reaction; already gone counts as done. */
  removeReaction(args: { channel: string; ts: string; name: string }): Promise<void>;
  /**
   * Messages of a thread, oldest first: the newest `limit` of those after `oldest` and before
   * `latest` (message ts, exclusive), reading at most {@link LISTING_PAGES} pages.
   */
  threadMessages(args: {
    channel: string;
    threadTs: string;
    limit: number;
    oldest?: string;
    latest?: string;
  }): Promise<ThreadMessage[]>;
  conversationFacts(channel: string): Promise<ConversationFacts>;
  openView(triggerId: string, view: Record<string, unknown>): Promise<void>;
  publishHome(userId: string, view: Record<string, unknown>): Promise<void>;
  postEphemeral(args: {
    channel: string;
    user: string;
    threadTs?: string;
    text: Mrkdwn;
    blocks?: Blocks;
  }): Promise<void>;
  /**
   * Replies privately through a `response_url` (a slash command's, or a click's); `blocks` lay
   * it out, `text` stays the notification and screen-reader fallback.
   */
  respond(responseUrl: string, text: Mrkdwn, blocks?: Blocks): Promise<void>;
  /** Account facts that decide access. */
  userInfo(userId: string): Promise<SlackUser>;
  /** The id of the bot's direct message conversation with a person (opened if need be). */
  openDirect(userId: string): Promise<string>;
  /** ts of a top-level message since `oldest` (epoch seconds) carrying the given metadata key, if any. */
  findInChannel(args: {
    channel: string;
    oldest: number;
    metadata: PostMetadata;
  }): Promise<string | undefined>;
  /**
   * The assistant pane's thread (`assistant.threads.*`): the status line under it (empty clears
   * it), its title, and the prompts a new thread suggests; without `threadTs` (agent messaging's
   * Messages tab, where Slack ignores a call that names a thread) only the conversation's prompts.
   */
  assistantThread(args: {
    channel: string;
    threadTs?: string;
    status?: string;
    title?: string;
    prompts?: readonly { title: string; message: string }[];
  }): Promise<void>;
  /** ts of a message in the thread carrying the given metadata key, if any. */
  findPosted(args: {
    channel: string;
    threadTs: string;
    metadata: PostMetadata;
  }): Promise<string | undefined>;
  /** ts of the bot's message without metadata in the thread since `oldest` (epoch seconds) of exactly `text`. */
  findUnmarked(args: {
    channel: string;
    threadTs: string;
    oldest: number;
    text: Mrkdwn;
  }): Promise<string | undefined>;
}

export interface SlackGatewayOptions {
  /** How every call is made: masked, its errors typed and counted (`caller.ts`). */
  caller: SlackCaller;
  /** The bot's own `bot_id` once known (auth.test): only its messages are its posts. */
  ownBotId?: () => string | undefined;
  /** Per-request time-out for `respond`, in milliseconds. */
  timeoutMs?: number;
}

export function createSlackGateway({
  caller,
  ownBotId,
  timeoutMs = 10_000,
}: SlackGatewayOptions): SlackGateway {
  return {
    async assistantThread({ channel, threadTs, status, title, prompts }) {
      const thread = { channel_id: channel, thread_ts: threadTs ?? '' };
      const conversation = threadTs ? thread : { channel_id: channel };
      if (status !== undefined && threadTs)
        await caller.call('assistant.threads.setStatus', { ...thread, status }, (client, args) =>
          client.assistant.threads.setStatus(args),
        );
      if (title !== undefined && threadTs)
        await caller.call('assistant.threads.setTitle', { ...thread, title }, (client, args) =>
          client.assistant.threads.setTitle(args),
        );
      if (prompts?.length)
        await caller.call(
          'assistant.threads.setSuggestedPrompts',
          { ...conversation, prompts },
          (client, args) =>
            client.assistant.threads.setSuggestedPrompts({ ...args, prompts: [...args.prompts] as never }),
        );
    },
    async postMessage({ channel, threadTs, text, blocks, metadata }) {
      const message = {
        channel,
        text,
        ...(blocks ? { blocks: blocks as never } : {}),
        thread_ts: threadTs,
        unfurl_links: false,
        unfurl_media: false,
      };
      const result = await caller.call(
        'chat.postMessage',
        message,
        (client, args) =>
          client.chat.postMessage({
            ...args,
            // Added unmasked: the bot writes its keys itself and puts no secret there.
            ...(metadata
              ? { metadata: { event_type: metadata.eventType, event_payload: eventPayload(metadata) } }
              : {}),
          }),
        // About one post a second per channel: a short 429 is waited out (it surely posted nothing).
        { channel, waitMs: POST_MAX_RATE_LIMIT_WAIT_MS },
      );
      if (typeof result.ts !== 'string') throw new SlackCallError('chat.postMessage', 'missing_ts');
      return result.ts;
    },
    async updateMessage({ channel, ts, text, blocks }) {
      const message = { channel, ts, text, ...(blocks ? { blocks: blocks as never } : {}) };
      await caller.call('chat.update', message, (client, args) => client.chat.update(args));
    },
    async removeReaction({ channel, ts, name }) {
      try {
        await caller.call('reactions.remove', { channel, timestamp: ts, name }, (client, args) =>
          client.reactions.remove(args),
        );
      } catch (error) {
        if (error instanceof SlackCallError && error.code === 'no_reaction') return;
        throw error;
      }
    },
    async conversationFacts(channel) {
      const result = await caller.call('conversations.info', { channel }, (client, args) =>
        client.conversations.info(args),
      );
      const c = result.channel ?? {};
      return {
        isMember: c.is_member === true || c.is_im === true,
        isArchived: c.is_archived === true,
        isDirect: c.is_im === true || c.is_mpim === true,
        isPrivate: c.is_private !== false || c.is_im === true || c.is_mpim === true,
      };
    },
    async openView(triggerId, view) {
      await caller.call('views.open', { trigger_id: triggerId, view: view as never }, (client, args) =>
        client.views.open(args),
      );
    },
    async publishHome(userId, view) {
      await caller.call('views.publish', { user_id: userId, view: view as never }, (client, args) =>
        client.views.publish(args),
      );
    },
    async addReaction({ channel, ts, name }) {
      try {
        await caller.call('reactions.add', { channel, timestamp: ts, name }, (client, args) =>
          client.reactions.add(args),
        );
      } catch (error) {
        // Already there (a retry after a lost answer): the reaction is in place.
        if (error instanceof SlackCallError && error.code === 'already_reacted') return;
        throw error;
      }
    },
    async postEphemeral({ channel, user, threadTs, text, blocks }) {
      await caller.call(
        'chat.postEphemeral',
        { channel, user, text, thread_ts: threadTs, ...(blocks ? { blocks: blocks as never } : {}) },
        (client, args) => client.chat.postEphemeral(args),
      );
    },
    respond: (responseUrl, text, blocks) =>
      caller.call(
        'response_url',
        { response_type: 'ephemeral', replace_original: false, text, ...(blocks ? { blocks } : {}) },
        async (_client, body) => {
          let response: Response;
          try {
            response = await fetch(responseUrl, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(body),
              signal: AbortSignal.timeout(timeoutMs),
            });
            await response.text();
          } catch (error) {
            throw new SlackCallError('response_url', 'request_failed', { cause: error });
          }
          // Slack answers 404 once a response_url has expired (30 minutes) or been used up.
          if (response.status === 404 || response.status === 410)
            throw new SlackCallError('response_url', 'expired_url');
          if (!response.ok) throw new SlackCallError('response_url', `http_${response.status}`);
        },
      ),
    async userInfo(userId) {
      const result = await caller.call('users.info', { user: userId }, (client, args) =>
        client.users.info(args),
      );
      const user = result.user ?? {};
      return {
        name: user.profile?.display_name || user.real_name || user.name || userId,
        isRestricted: user.is_restricted === true,
        isUltraRestricted: user.is_ultra_restricted === true,
        isBot: user.is_bot === true,
        deleted: user.deleted === true,
        teamId: typeof user.team_id === 'string' ? user.team_id : undefined,
        enterpriseId: user.enterprise_user?.enterprise_id || undefined,
      };
    },
    async openDirect(userId) {
      const result = await caller.call('conversations.open', { users: userId }, (client, args) =>
        client.conversations.open(args),
      );
      const id = result.channel?.id;
      if (typeof id !== 'string') throw new SlackCallError('conversations.open', 'missing_channel');
      return id;
    },
    ...listingReads(caller, ownBotId),
  };
}
