import { statusCard } from '../blocks/status-card.js';
import type { OutboxPayload } from '../domain/outbox-payload.js';
import type { Blocks } from '../slack/gateway.js';
import { recordedMrkdwn } from '../slack/mrkdwn.js';
import { SlackCallError } from '../slack/slack-errors.js';
import type { OutboxItem } from '../store/types.js';
import { createNotificationSender } from './notifications.js';
import type { OutboxOptions } from './outbox.js';
import { unkeyedPostKey } from './outbox-registry.js';
import { ClaimLost } from './rescue.js';
import { createReactionSync } from './root-reaction.js';
import { createSessionSync } from './sessions.js';
import type { StepDelivery } from './workflow-steps.js';

/** The payload of one kind of outbox item. */
type Payload<T extends OutboxPayload['type']> = Extract<OutboxPayload, { type: T }>;

type SenderOptions = Pick<
  OutboxOptions,
  'store' | 'instanceId' | 'slack' | 'logger' | 'hints' | 'sessions' | 'home' | 'steps'
> & {
  now: () => number;
};

/** The Slack calls that deliver each kind of outbox item. */
export function createSender(options: SenderOptions) {
  const { store, slack, logger, now } = options;
  const notifications = createNotificationSender({ slack, logger });
  const syncSession = options.sessions
    ? createSessionSync({ sessions: options.sessions, logger })
    : undefined;
  const syncReaction = createReactionSync({ store, slack, logger });

  /** A thread post, not posted twice: after an attempt that never recorded its answer, looked for first. */
  async function sendPost(item: OutboxItem, payload: Payload<'post'>, claimCovers: () => Promise<boolean>) {
    const metadata = {
      eventType: payload.eventType,
      // The dedupe key is stable across restarts and names the run; the id is the fallback.
      key: item.dedupeKey ?? unkeyedPostKey(item.id),
      ...(payload.about ? { fields: { ...payload.about } } : {}),
    };
    // An earlier attempt started and never recorded its answer: Slack may already have the
    // message. Its metadata says so.
    if (item.attempts > 1) {
      const found = await slack
        .findPosted({ channel: payload.channel, threadTs: payload.threadTs, metadata })
        .catch((error: unknown) => {
          // Slack cannot say right now: ask again later rather than risk a second copy.
          // Only when it can never say (the app lacks the method or scope) post anyway.
          if (error instanceof SlackCallError && error.permanent) return undefined;
          throw error;
        });
      if (found) return;
      // The look may have used up the claim: renewed before the post, or not posted at all.
      if (!(await claimCovers())) throw new ClaimLost();
    }
    await slack.postMessage({
      channel: payload.channel,
      threadTs: payload.threadTs,
      text: recordedMrkdwn(payload.text),
      ...(payload.blocks ? { blocks: payload.blocks as Blocks } : {}),
      metadata,
    });
  }

  /** The status card re-rendered from the job as it is now, with its session, emoji and App Home. */
  async function sendCardUpdate(item: OutboxItem, payload: Payload<'update_root'>) {
    if (item.jobId === null) return;
    // Read before the job: every update queued up to here is covered by the rendering below
    // (each was queued in the same write as the change it shows).
    const upto = await store.latestCardUpdate(item.jobId);
    const job = await store.getJob(item.jobId);
    if (!job) return;
    await syncSession?.(job);
    const card = statusCard(job, now(), options.hints);
    await slack.updateMessage({
      channel: payload.channel,
      ts: payload.ts,
      text: card.text,
      blocks: card.blocks,
    });
    await syncReaction(job);
    // Rate limits: a burst of changes costs one chat.update, not one per change.
    if (upto !== undefined && upto > item.id)
      await store.supersedeCardUpdates(job.id, upto, options.instanceId, now());
    await options.home?.refresh(job.requesterId);
  }

  /** A reply to a command's `response_url`, said privately in the channel once the URL expired. */
  async function sendResponse(payload: Payload<'respond'>) {
    try {
      await slack.respond(payload.responseUrl, recordedMrkdwn(payload.text));
    } catch (error) {
      // A response_url lives 30 minutes; after that, say it privately in the channel.
      if (!(error instanceof SlackCallError && error.code === 'expired_url' && payload.fallback)) throw error;
      await slack.postEphemeral({
        channel: payload.fallback.channel,
        user: payload.fallback.user,
        text: recordedMrkdwn(payload.text),
      });
    }
  }

  /**
   * Delivers an item; resolves to Slack's error code when it is given up without an error, or when to take it again.
   * `claimCovers` says whether the claim still covers a call about to start (renewing it if needed).
   */
  async function send(item: OutboxItem, claimCovers: () => Promise<boolean>): Promise<StepDelivery> {
    const payload = item.payload;
    if (!(await claimCovers())) throw new ClaimLost();
    switch (payload.type) {
      case 'post':
        await sendPost(item, payload, claimCovers);
        return;
      case 'update_root':
        await sendCardUpdate(item, payload);
        return;
      case 'reaction':
        await slack.addReaction({ channel: payload.channel, ts: payload.ts, name: payload.name });
        return;
      case 'respond':
        await sendResponse(payload);
        return;
      case 'ephemeral':
        await slack.postEphemeral({
          channel: payload.channel,
          user: payload.user,
          text: recordedMrkdwn(payload.text),
          ...(payload.threadTs ? { threadTs: payload.threadTs } : {}),
        });
        return;
      case 'notify':
      case 'direct':
        return notifications.send(item, payload);
      case 'complete_step':
      case 'await_job':
        return options.steps ? options.steps.send(item, payload) : 'no_workflow_steps';
    }
  }

  return send;
}
