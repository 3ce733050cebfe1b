import type { RenderHints } from '../blocks/messages.js';
import { statusCard } from '../blocks/status-card.js';
import { type Lease, readyForCall } from '../cluster/lease.js';
import type { OutboxPayload } from '../domain/outbox-payload.js';
import { parseOutboxPayload, unkeyedPostKey } from '../domain/outbox-registry.js';
import type { Logger } from '../logging/logger.js';
import type { AgentSessions } from '../slack/agent-sessions.js';
import { type Blocks, SlackCallError, type SlackGateway } from '../slack/gateway.js';
import { recordedMrkdwn } from '../slack/mrkdwn.js';
import type { ClusterStore, JobsStore, OutboxItem, OutboxStore } from '../store/types.js';
import { backoffMs } from '../util/backoff.js';
import { createLoop, type Loop } from '../util/loop.js';
import type { YieldGate } from '../util/yield-gate.js';
import { createNotificationSender } from './notifications.js';
import { ClaimLost, createRescue } from './rescue.js';
import { createReactionSync } from './root-reaction.js';
import { createSessionSync } from './sessions.js';
import type { createStepSender, StepDelivery } from './workflow-steps.js';

/** The payload of one kind of outbox item. */
type Payload<T extends OutboxPayload['type']> = Extract<OutboxPayload, { type: T }>;

export interface OutboxOptions {
  store: OutboxStore &
    Pick<JobsStore, 'getJob' | 'setRootReaction'> &
    Pick<ClusterStore, 'claimOutbox' | 'renewHold'>;
  /** This process's instance id, under which it claims the items it delivers. */
  instanceId: string;
  slack: SlackGateway;
  logger: Logger;
  /** How follow-ups work, for the status card's hint. */
  hints: RenderHints;
  /** Slack's agent sessions: each card update also shows the job's state as its thread's session. */
  sessions?: AgentSessions;
  /**
   * Refreshes a requester's App Home after their job's card changed. Declared here and
   * connected by the composition root (the App Home publisher), so delivery never reaches up.
   */
  home?: { refresh(userId: string): Promise<void> };
  /** Answers Workflow Builder steps; without it their items are given up. */
  steps?: Pick<ReturnType<typeof createStepSender>, 'send'>;
  /** Called when Slack refused an item for good and it is given up, for metrics. */
  onGivenUp?: () => void;
  /** What each round waits for first: Slack's requests go before it. Default: nothing. */
  gate?: YieldGate;
  /**
   * How long a delivery claim holds off other instances: one Slack call and a margin (see
   * `cluster/lease.ts`); renewed before each post that must not be made twice.
   */
  lease: Lease;
  /** This process's monotonic clock (ms), which tells whether a claim still covers a call. */
  monotonic?: () => number;
  /** How many items one round takes, and sends at once. */
  batchSize?: number;
  /** Idle sleep between rounds, in milliseconds. */
  idleMs?: number;
  now?: () => number;
}

/** First retry delay of a failed delivery; doubles per attempt up to {@link OUTBOX_MAX_RETRY_MS}. */
export const OUTBOX_FIRST_RETRY_MS = 1_000;
/** Longest wait between delivery attempts: a Slack outage delays messages, never drops them. */
export const OUTBOX_MAX_RETRY_MS = 5 * 60_000;
/** Every write that ends an attempt also ends the claim on the item. */
const UNCLAIMED = { claimedBy: null, claimedUntil: null } as const;

const MIN_IDLE_MS = 50;

export { rescueIntro } from './rescue.js';

export interface Outbox extends Loop {
  /** Delivers one item now (what the loop does). Exposed for tests. */
  deliver(item: OutboxItem): Promise<void>;
}

/**
 * Delivers what the bot has to say in Slack. Every message is recorded in the store first and
 * marked delivered only after Slack accepted it; failures are retried with backoff.
 */
export function createOutbox(options: OutboxOptions): Outbox {
  const { store, slack, logger } = options;
  const now = options.now ?? Date.now;
  const monotonic = options.monotonic ?? (() => performance.now());
  const batchSize = options.batchSize ?? 10;
  const notifications = createNotificationSender({ slack, logger });
  const syncSession = options.sessions
    ? createSessionSync({ sessions: options.sessions, logger })
    : undefined;
  const rescue = createRescue({ slack, store, logger });

  const syncReaction = createReactionSync({ store, slack, logger });

  /** A thread post, not posted twice: after an attempt that never recorded its answer, looked for first. */
  async function sendPost(item: OutboxItem, payload: Payload<'post'>, held: () => Promise<boolean>) {
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
      if (!(await held())) throw new ClaimLost();
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
   * `held` says whether the claim still covers a call about to start (renewing it if needed).
   */
  async function send(item: OutboxItem, held: () => Promise<boolean>): Promise<StepDelivery> {
    const payload = item.payload;
    if (!(await held())) throw new ClaimLost();
    switch (payload.type) {
      case 'post':
        await sendPost(item, payload, held);
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

  /** Delivers an item claimed at `grantedAt` (this process's monotonic clock; now if not given). */
  async function deliver(stored: OutboxItem, grantedAt = monotonic()): Promise<void> {
    const update = (patch: Parameters<OutboxStore['updateOutbox']>[1]) =>
      store.updateOutbox(stored.id, patch, options.instanceId);
    // Written by this or another release: a payload this one cannot read is given up, and the
    // other items go on.
    const checked = parseOutboxPayload(stored.payload);
    if (!checked.ok) {
      logger.error('an outbox item cannot be read; it is given up', {
        outboxId: stored.id,
        jobId: stored.jobId,
        error: checked.error,
      });
      await update({ deadAt: now(), lastError: 'invalid_payload', ...UNCLAIMED });
      return;
    }
    const item = { ...stored, payload: checked.payload };
    // The claim counted this attempt and recorded its start.
    const attempts = item.attempts;
    const renew = () => store.renewHold(options.instanceId, { outboxId: item.id }, options.lease.leaseMs);
    const held = () => readyForCall(options.lease, renew, grantedAt, monotonic);
    try {
      const givenUp = await send(item, held);
      if (typeof givenUp === 'object') {
        await update({ nextAttemptAt: givenUp.laterAt, lastError: null, ...UNCLAIMED });
        return;
      }
      if (givenUp) {
        // Already logged (at warn: a setting to fix, not a fault of the bot).
        await update({ deadAt: now(), lastError: givenUp, ...UNCLAIMED });
        options.onGivenUp?.();
        return;
      }
      await update({ deliveredAt: now(), lastError: null, ...UNCLAIMED });
    } catch (error) {
      if (error instanceof ClaimLost) {
        logger.warn('another instance took this delivery over; not posting', { outboxId: item.id });
        return;
      }
      const code = error instanceof SlackCallError ? error.code : 'unexpected_error';
      const rescued = error instanceof SlackCallError && error.permanent && (await rescue(item, code, held));
      if (rescued === 'delivered') {
        await update({ deliveredAt: now(), lastError: code, ...UNCLAIMED });
        return;
      }
      if (rescued === 'claim_lost') return;
      if (error instanceof SlackCallError && error.permanent) {
        logger.error('Slack refused a message for good; it cannot be delivered', {
          outboxId: item.id,
          jobId: item.jobId,
          type: item.payload.type,
          code,
        });
        await update({ deadAt: now(), lastError: code, ...UNCLAIMED });
        options.onGivenUp?.();
        return;
      }
      const backoff = backoffMs(OUTBOX_FIRST_RETRY_MS, attempts, OUTBOX_MAX_RETRY_MS);
      const wait =
        error instanceof SlackCallError && error.retryAfterMs ? Math.max(error.retryAfterMs, 100) : backoff;
      logger.warn('Slack delivery failed; will retry', {
        outboxId: item.id,
        jobId: item.jobId,
        type: item.payload.type,
        code,
        attempts,
        retryInMs: wait,
      });
      await update({ nextAttemptAt: now() + wait, lastError: code, ...UNCLAIMED });
    }
  }

  const loop = createLoop({
    ...(options.gate ? { gate: options.gate } : {}),
    name: 'outbox',
    logger,
    idleMs: options.idleMs ?? 1_000,
    async step() {
      // Read before the claim is asked for: the store's lease starts later, never earlier.
      const grantedAt = monotonic();
      const items = await store.claimOutbox(options.instanceId, now(), batchSize, options.lease.leaseMs);
      // Items of one claim go out together: a job's thread posts never share a claim (each
      // waits for the one before it), so order within a thread holds.
      // Settled, not raced: one failing item must not leave the others running unwatched.
      const results = await Promise.allSettled(items.map((item) => deliver(item, grantedAt)));
      for (const result of results)
        if (result.status === 'rejected') logger.error('delivery crashed', { error: result.reason });
      if (items.length === batchSize) return { busy: true };
      const next = await store.nextOutboxAt(now());
      if (next === undefined) return { busy: false };
      // Never spin: after an empty round, wait a little even if something is due.
      const floor = items.length === 0 ? MIN_IDLE_MS : 0;
      return { busy: false, sleepMs: Math.max(floor, next - now()) };
    },
  });

  return { ...loop, deliver };
}
