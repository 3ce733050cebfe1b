import type { Logger } from '../logging/logger.js';
import { isChannelClosed, SlackCallError } from '../slack/caller.js';
import type { SlackGateway } from '../slack/gateway.js';
import { CLOCK_MARGIN_S, type PostMetadata } from '../slack/message-listing.js';
import {
  channelMention,
  codeSpan,
  type Mrkdwn,
  md,
  recordedMrkdwn,
  truncateMrkdwn,
} from '../slack/mrkdwn.js';
import type { JobsStore, OutboxItem } from '../store/types.js';
import type { ThreadPostPayload } from './kinds/thread-post.js';
import { type ClaimCovers, type RescueResult, unkeyedPostKey } from './outbox-kind.js';

/** Length a post refused as too long is cut to; Slack's limit is far above. */
const SHORTENED_POST_CHARS = 3_000;

/** Slack refused the post's Block Kit: its text (the blocks' fallback) says the same. */
const BLOCKS_REFUSED: ReadonlySet<string> = new Set([
  'invalid_blocks',
  'invalid_blocks_format',
  'msg_blocks_too_long',
]);
/** Slack refused the post's message metadata. */
const METADATA_REFUSED: ReadonlySet<string> = new Set([
  'invalid_metadata_format',
  'invalid_metadata_schema',
  'metadata_too_large',
]);

/** The first line of a thread post sent directly to the requester because its thread is gone. */
export const rescueIntro = (channel: string, code: string) =>
  md`:information_source: I could not post in the job's thread in ${channelMention(channel)} (Slack said ${codeSpan(code)}), so here it is directly:`;

type ThreadPost = OutboxItem<ThreadPostPayload>;

/**
 * A thread post Slack refuses for good still has a reader, and is never lost to a layout: a
 * too-long text is shortened; a post whose blocks or metadata Slack refuses is sent again as its
 * plain text (without the metadata when that was refused); a thread that is gone (channel
 * archived, bot removed) is replaced by a direct message to the requester. `claimCovers` says whether
 * the delivery claim still covers a post about to start. Each costs one more post, made only
 * after Slack refused the first.
 */
export function createRescue(deps: {
  slack: SlackGateway;
  store: Pick<JobsStore, 'getJob'>;
  logger: Logger;
}) {
  const { slack, store, logger } = deps;

  /**
   * Without metadata a post cannot be found by its key after a crash, so an attempt after one that
   * may have made it (`attempts > 1`) first looks for it by its exact text: the bot's message
   * without metadata in the thread, since the item was queued (less the clock margin). The price:
   * an identical metadata-less post of the bot in that thread within those minutes is taken for it.
   * As for the look by metadata, only when Slack can never answer (scope, method) is it posted anyway.
   */
  async function unmarked(item: OutboxItem, at: { channel: string; threadTs: string }, text: Mrkdwn) {
    if (item.attempts <= 1) return undefined;
    const oldest = Math.floor(item.createdAt / 1000) - CLOCK_MARGIN_S;
    return slack.findUnmarked({ ...at, oldest, text }).catch((error: unknown) => {
      if (error instanceof SlackCallError && error.permanent) return undefined;
      throw error;
    });
  }

  /** The post in its own thread as plain text: with its metadata, else (refused too) without. */
  async function inThread(
    item: ThreadPost,
    payload: ThreadPostPayload,
    code: string,
    metadata: PostMetadata,
    claimCovers: ClaimCovers,
  ): Promise<RescueResult> {
    const at = { channel: payload.channel, threadTs: payload.threadTs };
    const whole = recordedMrkdwn(payload.text);
    const text = code === 'msg_too_long' ? truncateMrkdwn(whole, SHORTENED_POST_CHARS) : whole;
    let refused = code;
    if (!METADATA_REFUSED.has(code)) {
      if (!(await claimCovers())) return 'claim_lost';
      try {
        await slack.postMessage({ ...at, text, metadata });
        if (BLOCKS_REFUSED.has(code))
          logger.warn('Slack refused a post’s blocks; it was sent as plain text', {
            outboxId: item.id,
            jobId: item.jobId,
            code,
          });
        return 'delivered';
      } catch (error) {
        if (!(error instanceof SlackCallError && METADATA_REFUSED.has(error.code))) throw error;
        refused = error.code;
      }
    }
    if (await unmarked(item, at, text)) return 'delivered';
    if (!(await claimCovers())) return 'claim_lost';
    await slack.postMessage({ ...at, text });
    logger.warn('Slack refused a post’s metadata; it was sent without, and is found by its text', {
      outboxId: item.id,
      jobId: item.jobId,
      code: refused,
    });
    return 'delivered';
  }

  /** The post sent to the requester directly, its thread being closed to the bot. */
  async function toRequester(
    item: ThreadPost,
    payload: ThreadPostPayload,
    code: string,
    metadata: PostMetadata,
    claimCovers: ClaimCovers,
  ): Promise<RescueResult> {
    const job = item.jobId === null ? undefined : await store.getJob(item.jobId);
    if (!job) return 'not_rescued';
    if (!(await claimCovers())) return 'claim_lost';
    const text = md`${rescueIntro(payload.channel, code)}\n${recordedMrkdwn(payload.text)}`;
    await slack.postMessage({ channel: job.requesterId, text, metadata });
    logger.warn('thread unavailable; told the requester directly', {
      outboxId: item.id,
      jobId: item.jobId,
      code,
    });
    return 'delivered';
  }

  return async function rescue(
    item: ThreadPost,
    code: string,
    claimCovers: ClaimCovers,
  ): Promise<RescueResult> {
    const payload = item.payload;
    const metadata = {
      eventType: payload.eventType,
      key: item.dedupeKey ?? unkeyedPostKey(item.id),
      // What the post is about, facts a later release added too, and the thread it was meant for.
      fields: { ...payload.about, thread: payload.threadTs } as PostMetadata['fields'],
    };
    const plain = code === 'msg_too_long' || BLOCKS_REFUSED.has(code) || METADATA_REFUSED.has(code);
    try {
      if (plain) return await inThread(item, payload, code, metadata, claimCovers);
      if (isChannelClosed(code)) return await toRequester(item, payload, code, metadata, claimCovers);
      return 'not_rescued';
    } catch (error) {
      // A re-send in the thread is found again (by its metadata, or its text) if it was made.
      const mayPass = plain && error instanceof SlackCallError && !error.permanent;
      logger.warn('rescue of a refused message failed', { outboxId: item.id, code, error });
      return mayPass ? 'retry' : 'not_rescued';
    }
  };
}
