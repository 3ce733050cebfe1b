import { rescueIntro } from '../blocks/rescue-texts.js';
import type { Logger } from '../logging/logger.js';
import type { SlackGateway } from '../slack/gateway.js';
import { md, recordedMrkdwn, truncateMrkdwn } from '../slack/mrkdwn.js';
import { isChannelClosed } from '../slack/slack-errors.js';
import type { JobsStore, OutboxItem } from '../store/types.js';
import { unkeyedPostKey } from './outbox-registry.js';

/** Length a post refused as too long is cut to; Slack's limit is far above. */
const SHORTENED_POST_CHARS = 3_000;

/** The claim on an item was taken over before a post: the post is not made, nothing is written. */
export class ClaimLost extends Error {
  override name = 'ClaimLost';
}

/**
 * A thread post Slack refuses for good still has a reader: a too-long text is shortened, and a
 * thread that is gone (channel archived, bot removed) is replaced by a direct message to the
 * requester. `held` says whether the delivery claim still covers a post about to start.
 */
export function createRescue(deps: {
  slack: SlackGateway;
  store: Pick<JobsStore, 'getJob'>;
  logger: Logger;
}) {
  const { slack, store, logger } = deps;
  return async function rescue(
    item: OutboxItem,
    code: string,
    held: () => Promise<boolean>,
  ): Promise<'delivered' | 'not_rescued' | 'claim_lost'> {
    const payload = item.payload;
    if (payload.type !== 'post') return 'not_rescued';
    const metadata = {
      eventType: payload.eventType,
      key: item.dedupeKey ?? unkeyedPostKey(item.id),
      fields: { ...payload.about, thread: payload.threadTs },
    };
    try {
      if (code === 'msg_too_long') {
        if (!(await held())) return 'claim_lost';
        const text = truncateMrkdwn(recordedMrkdwn(payload.text), SHORTENED_POST_CHARS);
        await slack.postMessage({ channel: payload.channel, threadTs: payload.threadTs, text, metadata });
        return 'delivered';
      }
      if (!isChannelClosed(code) || item.jobId === null) return 'not_rescued';
      const job = await store.getJob(item.jobId);
      if (!job) return 'not_rescued';
      if (!(await held())) return 'claim_lost';
      const text = md`${rescueIntro(payload.channel, code)}\n${recordedMrkdwn(payload.text)}`;
      await slack.postMessage({ channel: job.requesterId, text, metadata });
      logger.warn('thread unavailable; told the requester directly', {
        outboxId: item.id,
        jobId: item.jobId,
        code,
      });
      return 'delivered';
    } catch (error) {
      logger.warn('rescue of a refused message failed', { outboxId: item.id, code, error });
      return 'not_rescued';
    }
  };
}
