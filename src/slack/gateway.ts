import type { WebClient } from '@slack/web-api';
import type { Logger } from '../logging/logger.js';
import type { ConversationFacts } from './conversations.js';
import {
  eventPayload,
  findByMetadata,
  findByText,
  LISTING_PAGES,
  listPages,
  newestThreadMessages,
  type PostMetadata,
  type ThreadMessage,
} from './message-listing.js';
import type { Mrkdwn } from './mrkdwn.js';
import { SlackCallError, slackCaller, withRateLimitWait } from './slack-errors.js';

export type { ConversationFacts } from './conversations.js';
export { LISTING_PAGES, type PostMetadata, type ThreadMessage } from './message-listing.js';
export { POST_MAX_RATE_LIMIT_WAIT_MS, SlackCallError } from './slack-errors.js';

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

/** The Slack calls the bot makes, with errors turned into {@link SlackCallError}. */
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
  postEphemeral(args: { channel: string; user: string; threadTs?: string; text: Mrkdwn }): Promise<void>;
  /** Replies privately through a slash command's `response_url`. */
  respond(responseUrl: string, text: Mrkdwn): Promise<void>;
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
  client: WebClient;
  logger: Logger;
  /** The bot's own `bot_id` once known (auth.test): only its messages are its posts. */
  ownBotId?: () => string | undefined;
  /** Per-request time-out for `respond`, in milliseconds. */
  timeoutMs?: number;
  /** Called with every failed call's method (`response_url` for `respond`) and error code, for metrics. */
  onError?: (method: string, code: string) => void;
}

export function createSlackGateway({
  client,
  logger,
  ownBotId,
  timeoutMs = 10_000,
  onError,
}: SlackGatewayOptions): SlackGateway {
  const call = slackCaller(logger, onError);
  /** A thread's messages with their metadata, from `oldest` (epoch seconds) if given. */
  const replies = (channel: string, ts: string, oldest?: number) =>
    listPages(call, 'conversations.replies', (cursor) =>
      client.conversations.replies({
        channel,
        ts,
        include_all_metadata: true,
        limit: 200,
        cursor,
        ...(oldest !== undefined ? { oldest: String(oldest) } : {}),
      }),
    );

  return {
    async assistantThread({ channel, threadTs, status, title, prompts }) {
      const thread = { channel_id: channel, thread_ts: threadTs ?? '' };
      const conversation = threadTs ? thread : { channel_id: channel };
      if (status !== undefined && threadTs)
        await call('assistant.threads.setStatus', () =>
          client.assistant.threads.setStatus({ ...thread, status }),
        );
      if (title !== undefined && threadTs)
        await call('assistant.threads.setTitle', () =>
          client.assistant.threads.setTitle({ ...thread, title }),
        );
      if (prompts?.length)
        await call('assistant.threads.setSuggestedPrompts', () =>
          client.assistant.threads.setSuggestedPrompts({ ...conversation, prompts: [...prompts] as never }),
        );
    },
    async postMessage({ channel, threadTs, text, blocks, metadata }) {
      const result = await call('chat.postMessage', () =>
        withRateLimitWait(() =>
          client.chat.postMessage({
            channel,
            text,
            ...(blocks ? { blocks: blocks as never } : {}),
            thread_ts: threadTs,
            unfurl_links: false,
            unfurl_media: false,
            ...(metadata
              ? {
                  metadata: {
                    event_type: metadata.eventType,
                    event_payload: eventPayload(metadata),
                  },
                }
              : {}),
          }),
        ),
      );
      if (typeof result.ts !== 'string') throw new SlackCallError('chat.postMessage', 'missing_ts');
      return result.ts;
    },
    async updateMessage({ channel, ts, text, blocks }) {
      await call('chat.update', () =>
        client.chat.update({ channel, ts, text, ...(blocks ? { blocks: blocks as never } : {}) }),
      );
    },
    async removeReaction({ channel, ts, name }) {
      try {
        await call('reactions.remove', () => client.reactions.remove({ channel, timestamp: ts, name }));
      } catch (error) {
        if (error instanceof SlackCallError && error.code === 'no_reaction') return;
        throw error;
      }
    },
    threadMessages: ({ channel, threadTs, limit, oldest, latest }) =>
      newestThreadMessages(
        listPages(call, 'conversations.replies', (cursor) =>
          client.conversations.replies({
            channel,
            ts: threadTs,
            limit: 200,
            cursor,
            include_all_metadata: true,
            ...(oldest ? { oldest } : {}),
            ...(latest ? { latest } : {}),
          }),
        ),
        limit,
      ),
    async conversationFacts(channel) {
      const result = await call('conversations.info', () => client.conversations.info({ channel }));
      const c = result.channel ?? {};
      return {
        isMember: c.is_member === true || c.is_im === true,
        isArchived: c.is_archived === true,
        isDirect: c.is_im === true || c.is_mpim === true,
        isPrivate: c.is_private !== false || c.is_im === true || c.is_mpim === true,
      };
    },
    async openView(triggerId, view) {
      await call('views.open', () => client.views.open({ trigger_id: triggerId, view: view as never }));
    },
    async publishHome(userId, view) {
      await call('views.publish', () => client.views.publish({ user_id: userId, view: view as never }));
    },
    async addReaction({ channel, ts, name }) {
      try {
        await call('reactions.add', () => client.reactions.add({ channel, timestamp: ts, name }));
      } catch (error) {
        // Already there (a retry after a lost answer): the reaction is in place.
        if (error instanceof SlackCallError && error.code === 'already_reacted') return;
        throw error;
      }
    },
    async postEphemeral({ channel, user, threadTs, text }) {
      await call('chat.postEphemeral', () =>
        client.chat.postEphemeral({ channel, user, text, thread_ts: threadTs }),
      );
    },
    respond: (responseUrl, text) =>
      call('response_url', async () => {
        let response: Response;
        try {
          response = await fetch(responseUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ response_type: 'ephemeral', replace_original: false, text }),
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
      }),
    async userInfo(userId) {
      const result = await call('users.info', () => client.users.info({ user: userId }));
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
      const result = await call('conversations.open', () => client.conversations.open({ users: userId }));
      const id = result.channel?.id;
      if (typeof id !== 'string') throw new SlackCallError('conversations.open', 'missing_channel');
      return id;
    },
    findInChannel: ({ channel, oldest, metadata }) =>
      findByMetadata(
        listPages(call, 'conversations.history', (cursor) =>
          client.conversations.history({
            channel,
            oldest: String(oldest),
            include_all_metadata: true,
            limit: 200,
            cursor,
          }),
        ),
        metadata,
        ownBotId?.(),
      ),
    findPosted: ({ channel, threadTs, metadata }) =>
      findByMetadata(replies(channel, threadTs), metadata, ownBotId?.()),
    findUnmarked: ({ channel, threadTs, oldest, text }) =>
      findByText(replies(channel, threadTs, oldest), text, ownBotId?.()),
  };
}
