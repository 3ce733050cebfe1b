import { type Lease, readyForCall } from '../cluster/membership.js';
import { SlackCallError } from '../slack/caller.js';
import type { ClusterStore, OutboxItem, OutboxStore } from '../store/types.js';
import { backoffMs, createLoop, type Loop } from '../util/loop.js';
import type { YieldGate } from '../util/yield-gate.js';
import { ClaimLost, type SendDeps } from './outbox-kind.js';
import { createSender, parseOutboxPayload } from './outbox-registry.js';

export interface OutboxOptions extends Omit<SendDeps, 'store' | 'now'> {
  store: SendDeps['store'] & OutboxStore & Pick<ClusterStore, 'claimOutbox' | 'renewClaim'>;
  /** Called when Slack refused an item for good and it is given up, for metrics. */
  onGivenUp?: () => void;
  /** What each round waits for first: Slack's requests go before it. Default: nothing. */
  gate?: YieldGate;
  /**
   * How long a delivery claim holds off other instances: one Slack call and a margin (see
   * `cluster/membership.ts`); renewed before each post that must not be made twice.
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

export interface Outbox extends Loop {
  /** Delivers one item now (what the loop does). Exposed for tests. */
  deliver(item: OutboxItem): Promise<void>;
}

/**
 * Delivers what the bot has to say in Slack. Every message is recorded in the store first and
 * marked delivered only after Slack accepted it; failures are retried with backoff.
 */
export function createOutbox(options: OutboxOptions): Outbox {
  const { store, logger } = options;
  const now = options.now ?? Date.now;
  const monotonic = options.monotonic ?? (() => performance.now());
  const batchSize = options.batchSize ?? 10;
  const { send, rescue } = createSender({ ...options, now });

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
    const renew = () => store.renewClaim(options.instanceId, { outboxId: item.id }, options.lease.leaseMs);
    const claimCovers = () => readyForCall(options.lease, renew, grantedAt, monotonic);
    try {
      const givenUp = await send(item, claimCovers);
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
      const rescued =
        error instanceof SlackCallError && error.permanent && (await rescue(item, code, claimCovers));
      if (rescued === 'delivered') {
        await update({ deliveredAt: now(), lastError: code, ...UNCLAIMED });
        return;
      }
      if (rescued === 'claim_lost') return;
      // A rescue that may pass is tried again with the item, like any failure that may pass.
      if (error instanceof SlackCallError && error.permanent && rescued !== 'retry') {
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
      const retry = {
        outboxId: item.id,
        jobId: item.jobId,
        type: item.payload.type,
        code,
        attempts,
        retryInMs: wait,
      };
      // Deferred for Slack's rate limit, the call was never made: its turn comes, nothing failed.
      if (error instanceof SlackCallError && error.deferred)
        logger.debug('Slack delivery waits for its turn', retry);
      else logger.warn('Slack delivery failed; will retry', retry);
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
