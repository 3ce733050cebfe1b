import { ErrorCode, type WebClient } from '@slack/web-api';
import type { Logger } from '../logger.js';
import type { Mrkdwn } from './mrkdwn.js';

/**
 * Slack errors that no retry can fix for this message: the channel is gone or closed to the
 * bot, or the message itself is unacceptable.
 */
const PERMANENT_ERRORS = new Set([
  'channel_not_found',
  'not_in_channel',
  'is_archived',
  'msg_too_long',
  'no_text',
  'invalid_blocks',
  'cant_update_message',
  'message_not_found',
  'edit_window_closed',
  'restricted_action',
  'restricted_action_read_only_channel',
  'restricted_action_thread_only_channel',
  'restricted_action_non_threadable_channel',
  'team_access_not_granted',
  'user_not_in_channel',
  'expired_url',
  'invalid_metadata_format',
  'invalid_metadata_schema',
  'metadata_too_large',
  // The app is set up wrongly for this call; an admin must act, retrying cannot help.
  'missing_scope',
  'not_allowed_token_type',
  'unknown_method',
  'method_deprecated',
  'invalid_arguments',
]);

/** A Slack Web API call that failed, with Slack's error code (`not_in_channel`, `http_500`…). */
export class SlackCallError extends Error {
  override name = 'SlackCallError';
  readonly code: string;
  /** No retry can succeed. */
  readonly permanent: boolean;
  /** How long Slack asked us to wait, on a 429. */
  readonly retryAfterMs: number | undefined;
  /** Slack answered `ok: false`: the call surely had no effect. */
  readonly isPlatformError: boolean;

  constructor(
    method: string,
    code: string,
    options: { retryAfterMs?: number; cause?: unknown; platform?: boolean } = {},
  ) {
    super(`Slack ${method} failed: ${code}`, { cause: options.cause });
    this.code = code;
    this.permanent = PERMANENT_ERRORS.has(code);
    this.retryAfterMs = options.retryAfterMs;
    this.isPlatformError = options.platform ?? false;
  }
}

function toSlackError(method: string, error: unknown): SlackCallError {
  const e = error as { code?: string; data?: { error?: string }; retryAfter?: number; statusCode?: number };
  switch (e?.code) {
    case ErrorCode.PlatformError:
      return new SlackCallError(method, e.data?.error ?? 'unknown_error', { cause: error, platform: true });
    case ErrorCode.RateLimitedError:
      return new SlackCallError(method, 'ratelimited', {
        retryAfterMs: (e.retryAfter ?? 1) * 1000,
        cause: error,
        platform: true,
      });
    case ErrorCode.HTTPError:
      return new SlackCallError(method, `http_${e.statusCode ?? 'error'}`, { cause: error });
    case ErrorCode.RequestError:
      return new SlackCallError(method, 'request_failed', { cause: error });
    default:
      return new SlackCallError(method, 'unexpected_error', { cause: error });
  }
}

/** Message metadata the bot attaches to its own posts, readable back with `include_all_metadata`. */
export interface PostMetadata {
  eventType: string;
  /** Identifies this post; never a secret (metadata is visible to the workspace). */
  key: string;
  /** More facts about the post, for whoever reads the thread's metadata. */
  fields?: Record<string, string | number | null>;
}

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
}

/** A message of a thread, as read back for context. */
export interface ThreadMessage {
  ts: string;
  /** Author's user id; absent for some bot and integration messages. */
  user: string | undefined;
  /** Set on messages posted by apps and bots. */
  botId: string | undefined;
  /** Bot messages' own name, when they have one. */
  username: string | undefined;
  text: string;
  /** The message metadata's event type: the bot's own posts carry one. */
  eventType: string | undefined;
  /** The author's workspace (differs from ours in a shared channel). */
  team: string | undefined;
}

/** Most pages of a message listing read (of up to 200 messages each). */
export const LISTING_PAGES = 10;

/** What the bot needs to know about a conversation before it starts a job there. */
export interface ConversationFacts {
  isMember: boolean;
  isArchived: boolean;
  /** A direct message or group direct message. */
  isDirect: boolean;
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
  /** ts of a top-level message since `oldest` (epoch seconds) carrying the given metadata key, if any. */
  findInChannel(args: {
    channel: string;
    oldest: number;
    metadata: PostMetadata;
  }): Promise<string | undefined>;
  /** ts of a message in the thread carrying the given metadata key, if any. */
  findPosted(args: {
    channel: string;
    threadTs: string;
    metadata: PostMetadata;
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

/** Longest Retry-After a post waits out in place (a 429 surely posted nothing), in milliseconds. */
export const POST_MAX_RATE_LIMIT_WAIT_MS = 10_000;

/** chat.postMessage is limited to about one message a second per channel: wait a short 429 out. */
async function withRateLimitWait<T>(fn: () => Promise<T>, tries = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      const e = error as { code?: string; retryAfter?: number };
      const waitMs = (e.retryAfter ?? 1) * 1000;
      if (e.code !== ErrorCode.RateLimitedError || attempt >= tries || waitMs > POST_MAX_RATE_LIMIT_WAIT_MS)
        throw error;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

/**
 * Whether a message is the bot's own post with this metadata. Metadata is visible to every app
 * in the conversation, and any of them may write the same: when the bot's id is known, a copy
 * by another app is not taken for the bot's post.
 */
function matches(message: unknown, metadata: PostMetadata, ownBotId: string | undefined): boolean {
  const m = message as {
    bot_id?: unknown;
    metadata?: { event_type?: string; event_payload?: { key?: unknown } };
  };
  if (ownBotId !== undefined && m.bot_id !== ownBotId) return false;
  const meta = m.metadata;
  return meta?.event_type === metadata.eventType && meta.event_payload?.key === metadata.key;
}

export function createSlackGateway({
  client,
  logger,
  ownBotId,
  timeoutMs = 10_000,
  onError,
}: SlackGatewayOptions): SlackGateway {
  async function call<T>(method: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      const typed = error instanceof SlackCallError ? error : toSlackError(method, error);
      logger.debug('Slack call failed', { method, code: typed.code });
      onError?.(method, typed.code);
      throw typed;
    }
  }

  /** The pages of a message listing, oldest first, at most {@link LISTING_PAGES}. */
  async function* pages<P extends { response_metadata?: { next_cursor?: string } }>(
    method: string,
    page: (cursor: string | undefined) => Promise<P>,
  ): AsyncGenerator<P> {
    let cursor: string | undefined;
    for (let n = 0; n < LISTING_PAGES; n++) {
      const result = await call(method, () => page(cursor));
      yield result;
      cursor = result.response_metadata?.next_cursor || undefined;
      if (!cursor) return;
    }
  }

  /** Pages through a message listing for the bot's own metadata key. */
  async function findInPages(
    method: string,
    metadata: PostMetadata,
    page: (cursor: string | undefined) => Promise<{
      messages?: { ts?: string }[];
      response_metadata?: { next_cursor?: string };
    }>,
  ): Promise<string | undefined> {
    for await (const result of pages(method, page)) {
      const found = (result.messages ?? []).find((m) => matches(m, metadata, ownBotId?.()));
      if (found?.ts) return found.ts;
    }
    return undefined;
  }

  return {
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
                    event_payload: { ...metadata.fields, key: metadata.key },
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
    async threadMessages({ channel, threadTs, limit, oldest, latest }) {
      let out: ThreadMessage[] = [];
      const replies = pages('conversations.replies', (cursor) =>
        client.conversations.replies({
          channel,
          ts: threadTs,
          limit: 200,
          cursor,
          include_all_metadata: true,
          ...(oldest ? { oldest } : {}),
          ...(latest ? { latest } : {}),
        }),
      );
      for await (const page of replies) {
        for (const m of page.messages ?? []) {
          if (typeof m.ts !== 'string') continue;
          out.push({
            ts: m.ts,
            user: m.user,
            botId: m.bot_id,
            username: (m as { username?: string }).username,
            text: m.text ?? '',
            eventType: (m as { metadata?: { event_type?: string } }).metadata?.event_type,
            team: (m as { user_team?: string }).user_team ?? m.team,
          });
        }
        // Slack pages oldest first: keep the newest `limit`.
        if (out.length > limit) out = out.slice(out.length - limit);
      }
      return out;
    },
    async conversationFacts(channel) {
      const result = await call('conversations.info', () => client.conversations.info({ channel }));
      const c = result.channel ?? {};
      return {
        isMember: c.is_member === true || c.is_im === true,
        isArchived: c.is_archived === true,
        isDirect: c.is_im === true || c.is_mpim === true,
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
      };
    },
    findInChannel: ({ channel, oldest, metadata }) =>
      findInPages('conversations.history', metadata, (cursor) =>
        client.conversations.history({
          channel,
          oldest: String(oldest),
          include_all_metadata: true,
          limit: 200,
          cursor,
        }),
      ),
    findPosted: ({ channel, threadTs, metadata }) =>
      findInPages('conversations.replies', metadata, (cursor) =>
        client.conversations.replies({
          channel,
          ts: threadTs,
          include_all_metadata: true,
          limit: 200,
          cursor,
        }),
      ),
  };
}
