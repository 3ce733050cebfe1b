import type { WebClient } from '@slack/web-api';
import type { SlackCaller } from './caller.js';
import type { SlackGateway } from './gateway.js';

/**
 * How far before a post was queued (or its job recorded) an earlier copy of it is looked for in a
 * channel's history, in seconds. That time is the recording host's clock, which may be off from
 * Slack's, and another instance may be the one looking: a host whose clock runs minutes fast
 * must still find what it posted, or the post would be made twice.
 */
export const CLOCK_MARGIN_S = 300;

/** Most pages of a message listing read (of up to 200 messages each). */
export const LISTING_PAGES = 10;

/** Message metadata the bot attaches to its own posts, readable back with `include_all_metadata`. */
export interface PostMetadata {
  eventType: string;
  /** Identifies this post; never a secret (metadata is visible to the workspace). */
  key: string;
  /** More facts about the post, for whoever reads the thread's metadata; empty ones are not sent. */
  fields?: Record<string, string | number | null | undefined>;
}

/** What Slack takes as a metadata `event_payload` value (`@slack/types`): `null` is not one. */
type PayloadValue = string | number;

/**
 * The `event_payload` Slack is sent for this metadata: its fields without the empty ones (a field
 * left out reads back the same as an empty one), and its key, which is what finds the post again.
 * Every post's metadata is built here.
 */
export function eventPayload(metadata: PostMetadata): Record<string, PayloadValue> {
  const payload: Record<string, PayloadValue> = {};
  for (const [name, value] of Object.entries(metadata.fields ?? {}))
    if (value !== null && value !== undefined) payload[name] = value;
  payload.key = metadata.key;
  return payload;
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
  /** Set for messages that are not plain ones (`thread_broadcast`, `channel_join`…). */
  subtype: string | undefined;
}

/**
 * The pages of a message listing (`method` with `args`, one `send` a page, through the caller),
 * oldest first, at most {@link LISTING_PAGES}.
 */
export async function* listPages<A, P extends { response_metadata?: { next_cursor?: string } }>(
  caller: Pick<SlackCaller, 'call'>,
  method: string,
  args: A,
  send: (client: WebClient, args: A & { cursor: string | undefined }) => Promise<P>,
): AsyncGenerator<P> {
  let cursor: string | undefined;
  for (let n = 0; n < LISTING_PAGES; n++) {
    const result = await caller.call(method, { ...args, cursor }, send);
    yield result;
    cursor = result.response_metadata?.next_cursor || undefined;
    if (!cursor) return;
  }
}

/** A listed message, read only for what tells the bot's own posts. */
type Listed = {
  ts?: string;
  bot_id?: unknown;
  text?: unknown;
  metadata?: { event_type?: string; event_payload?: { key?: unknown } };
};
type Pages = AsyncIterable<{ messages?: { ts?: string }[] }>;

/** ts of the first listed message by the bot that passes `test`, if any. */
async function findOwn(pages: Pages, test: (m: Listed) => boolean): Promise<string | undefined> {
  for await (const result of pages) {
    const found = (result.messages ?? []).find((m) => test(m as Listed));
    if (found?.ts) return found.ts;
  }
  return undefined;
}

/**
 * ts of the first listed message that is the bot's own post with this metadata, if any. Metadata
 * is visible to every app in the conversation, and any of them may write the same: when the bot's
 * id is known, a copy by another app is not taken for the bot's post.
 */
export const findByMetadata = (pages: Pages, metadata: PostMetadata, ownBotId: string | undefined) =>
  findOwn(
    pages,
    (m) =>
      (ownBotId === undefined || m.bot_id === ownBotId) &&
      m.metadata?.event_type === metadata.eventType &&
      m.metadata.event_payload?.key === metadata.key,
  );

/**
 * ts of the first listed message that is the bot's own post of exactly this text and without
 * metadata, if any: how a post Slack refused metadata for is found again. Always a bot's message
 * (the bot's own once its id is known), never a person's who quoted it.
 */
export const findByText = (pages: Pages, text: string, ownBotId: string | undefined) =>
  findOwn(
    pages,
    (m) =>
      m.bot_id !== undefined &&
      (ownBotId === undefined || m.bot_id === ownBotId) &&
      m.metadata === undefined &&
      m.text === text,
  );

/** The newest `limit` messages of a thread's pages, oldest first. */
export async function newestThreadMessages(
  pages: AsyncIterable<{
    messages?: { ts?: string; user?: string; bot_id?: string; text?: string; team?: string }[];
  }>,
  limit: number,
): Promise<ThreadMessage[]> {
  let out: ThreadMessage[] = [];
  for await (const page of pages) {
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
        subtype: (m as { subtype?: string }).subtype,
      });
    }
    // Slack pages oldest first: keep the newest `limit`.
    if (out.length > limit) out = out.slice(out.length - limit);
  }
  return out;
}

/**
 * The gateway's reads of message listings: a thread's newest messages, and the bot's own post
 * found again in a thread or a channel by its metadata, or by its text.
 */
export function listingReads(
  caller: SlackCaller,
  ownBotId: (() => string | undefined) | undefined,
): Pick<SlackGateway, 'threadMessages' | 'findInChannel' | 'findPosted' | 'findUnmarked'> {
  const replies = (args: { channel: string; ts: string; oldest?: string; latest?: string }) =>
    listPages(
      caller,
      'conversations.replies',
      { ...args, include_all_metadata: true, limit: 200 },
      (client, a) => client.conversations.replies(a),
    );
  return {
    threadMessages: ({ channel, threadTs, limit, oldest, latest }) =>
      newestThreadMessages(
        replies({ channel, ts: threadTs, ...(oldest ? { oldest } : {}), ...(latest ? { latest } : {}) }),
        limit,
      ),
    findInChannel: ({ channel, oldest, metadata }) =>
      findByMetadata(
        listPages(
          caller,
          'conversations.history',
          { channel, oldest: String(oldest), include_all_metadata: true, limit: 200 },
          (client, a) => client.conversations.history(a),
        ),
        metadata,
        ownBotId?.(),
      ),
    findPosted: ({ channel, threadTs, metadata }) =>
      findByMetadata(replies({ channel, ts: threadTs }), metadata, ownBotId?.()),
    // Looked for as it was posted: masked.
    findUnmarked: ({ channel, threadTs, oldest, text }) =>
      findByText(replies({ channel, ts: threadTs, oldest: String(oldest) }), caller.mask(text), ownBotId?.()),
  };
}
