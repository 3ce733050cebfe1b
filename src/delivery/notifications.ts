import type { Logger } from '../logging/logger.js';
import type { Blocks, SlackGateway } from '../slack/gateway.js';
import { CLOCK_MARGIN_S } from '../slack/message-listing.js';
import { recordedMrkdwn } from '../slack/mrkdwn.js';
import { isChannelClosed, SlackCallError } from '../slack/slack-errors.js';
import type { OutboxItem, OutboxPayload } from '../store/types.js';
import { unkeyedPostKey } from './outbox-registry.js';

type Notification = Extract<OutboxPayload, { type: 'notify' | 'direct' }>;

/** The requester cannot get a direct message from the bot: gone, or not a person. */
const PERSON_UNREACHABLE = new Set(['user_not_found', 'user_disabled', 'user_not_visible', 'cannot_dm_bot']);

export interface NotificationSender {
  /**
   * Posts a channel notification or a requester's direct message once: after an attempt that
   * may have reached Slack, the conversation's recent history is read for its metadata first.
   * Resolves to Slack's error code when the item is given up (the bot cannot post there, and no
   * retry will change that), undefined when it is in Slack.
   */
  send(item: OutboxItem, payload: Notification): Promise<string | undefined>;
}

export function createNotificationSender({
  slack,
  logger,
}: {
  slack: SlackGateway;
  logger: Logger;
}): NotificationSender {
  // A channel the bot was never invited to would otherwise log on every outcome.
  const warned = new Set<string>();

  async function post(channel: string, item: OutboxItem, payload: Notification): Promise<void> {
    const metadata = {
      eventType: payload.eventType,
      key: item.dedupeKey ?? unkeyedPostKey(item.id),
      ...(payload.fields ? { fields: payload.fields } : {}),
    };
    if (item.attempts > 1) {
      const found = await slack
        .findInChannel({ channel, oldest: Math.floor(item.createdAt / 1000) - CLOCK_MARGIN_S, metadata })
        .catch((error: unknown) => {
          // As for thread posts: ask again later, unless Slack can never say (scope, method).
          if (error instanceof SlackCallError && error.permanent) return undefined;
          throw error;
        });
      if (found) return;
    }
    await slack.postMessage({
      channel,
      text: recordedMrkdwn(payload.text),
      ...(payload.blocks ? { blocks: payload.blocks as Blocks } : {}),
      metadata,
    });
  }

  function giveUp(
    item: OutboxItem,
    where: { channel: string } | { user: string },
    code: string,
    message: string,
  ): string {
    const context = { ...where, outboxId: item.id, jobId: item.jobId, code };
    const seen = `${'channel' in where ? where.channel : where.user}:${code}`;
    if (warned.has(seen)) logger.debug(message, context);
    else {
      warned.add(seen);
      logger.warn(message, context);
    }
    return code;
  }

  return {
    async send(item, payload) {
      try {
        if (payload.type === 'notify') await post(payload.channel, item, payload);
        else await post(await slack.openDirect(payload.user), item, payload);
        return undefined;
      } catch (error) {
        if (!(error instanceof SlackCallError)) throw error;
        // The notification channel is closed to the bot until someone invites it (or picks another).
        if (payload.type === 'notify' && isChannelClosed(error.code))
          return giveUp(
            item,
            { channel: payload.channel },
            error.code,
            'cannot post in the notification channel (NOTIFY_CHANNEL_ID); invite the bot there. Notifications to it are given up',
          );
        if (payload.type === 'direct' && (PERSON_UNREACHABLE.has(error.code) || isChannelClosed(error.code)))
          return giveUp(
            item,
            { user: payload.user },
            error.code,
            'cannot send the requester a direct message; it is given up',
          );
        throw error;
      }
    },
  };
}
