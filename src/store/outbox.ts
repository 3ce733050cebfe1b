import type { NewOutboxItem, OutboxItem, OutboxPatch } from './records.js';
import { parseAt, parseMaxId, parseOutboxItem } from './rows.js';
import { type Engine, type Operation, tx } from './statements.js';

/** The outbox: what is still to be posted to Slack, and the status card updates among it. */
export interface OutboxStore {
  enqueue(items: NewOutboxItem[], now: number): Promise<void>;
  /**
   * Undelivered outbox items that are due and not claimed, oldest first. Thread posts of one job
   * come out one at a time, in order; root updates, reactions and private replies are independent.
   */
  dueOutbox(now: number, limit: number): Promise<OutboxItem[]>;
  /**
   * Ends or records a delivery attempt of `instanceId`; refused (false, nothing written) when its
   * claim on the item was taken over.
   */
  updateOutbox(id: number, patch: OutboxPatch, instanceId?: string): Promise<boolean>;
  /**
   * Earliest time (on the caller's clock, `now`) an undelivered item not queued behind another
   * can be taken: its next attempt, or the end of another instance's claim on it. Undefined when
   * there is none.
   */
  nextOutboxAt(now: number): Promise<number | undefined>;
  /** Id of the job's newest undelivered status card update, if any. */
  latestCardUpdate(jobId: number): Promise<number | undefined>;
  /**
   * Marks the job's undelivered card updates up to `uptoId` delivered at `now` (one update that
   * rendered the job after they were queued covers them), except those another instance has claimed.
   */
  supersedeCardUpdates(jobId: number, uptoId: number, instanceId: string, now: number): Promise<void>;
}

/**
 * The outbox's statements, one text for SQLite and PostgreSQL with `:name` parameters, and its
 * methods over them. `{{lock}}` marks where PostgreSQL locks the rows it claims, skipping those a
 * concurrent claimer has locked; SQLite has a single writer and needs none.
 */

/**
 * An item next in line: not queued behind an earlier one. A thread post is queued behind an
 * earlier undelivered post of its job, and a status card update behind an earlier undelivered
 * update of its card (so an older rendering never lands last). Served by the partial indexes
 * `outbox_job_pending` and `outbox_job_card`.
 */
const NEXT_IN_LINE = `(o.job_id IS NULL OR o.kind NOT IN ('post', 'update_root') OR NOT EXISTS (
        SELECT 1 FROM outbox p
        WHERE p.job_id = o.job_id AND p.id < o.id AND p.delivered_at IS NULL AND p.dead_at IS NULL
          AND p.kind = 'post' AND o.kind = 'post')
      AND NOT EXISTS (
        SELECT 1 FROM outbox p
        WHERE p.job_id = o.job_id AND p.id < o.id AND p.delivered_at IS NULL AND p.dead_at IS NULL
          AND p.kind = 'update_root' AND o.kind = 'update_root'))`;

export const OUTBOX_QUERIES = {
  /** A repeated dedupe key keeps the first item. */
  enqueue: `
    INSERT INTO outbox (job_id, dedupe_key, kind, payload, next_attempt_at, created_at)
    VALUES (:jobId, :dedupeKey, :kind, :payload, :now, :now)
    ON CONFLICT (dedupe_key) DO NOTHING`,
  latestCardUpdate: `
    SELECT MAX(id) AS id FROM outbox
    WHERE job_id = :jobId AND kind = 'update_root' AND delivered_at IS NULL AND dead_at IS NULL`,
  supersedeCardUpdates: `
    UPDATE outbox SET delivered_at = :now, claimed_by = NULL, claimed_until = NULL
    WHERE job_id = :jobId AND kind = 'update_root' AND id <= :uptoId AND delivered_at IS NULL AND dead_at IS NULL
      AND (claimed_by IS NULL OR claimed_by = :instanceId)`,
  /**
   * Claims due outbox items for `:leaseMs` by the store's clock (`{{now}}`, see
   * `cluster-store.ts`) and starts an attempt on each (counted, `started_at` set). The due time
   * `:now` is the instance's: it says when an item is wanted, the claim says by whom.
   */
  claimOutbox: `
    UPDATE outbox SET claimed_by = :instanceId, claimed_until = {{now}} + :leaseMs, attempts = attempts + 1,
      started_at = :now
    WHERE id IN (
      SELECT o.id FROM outbox o
      WHERE o.delivered_at IS NULL AND o.dead_at IS NULL AND o.next_attempt_at <= :now
        AND (o.claimed_until IS NULL OR o.claimed_until <= {{now}}) AND ${NEXT_IN_LINE}
      ORDER BY o.next_attempt_at, o.id LIMIT :limit {{lock}})
    RETURNING *`,
  /**
   * Due outbox items. A thread post waits for earlier undelivered posts of its job (order in the
   * thread); the check is served by the partial index `outbox_job_pending`.
   */
  dueOutbox: `
    SELECT * FROM outbox o
    WHERE o.delivered_at IS NULL AND o.dead_at IS NULL AND o.next_attempt_at <= :now
      AND (o.claimed_until IS NULL OR o.claimed_until <= {{now}}) AND ${NEXT_IN_LINE}
    ORDER BY o.next_attempt_at, o.id LIMIT :limit`,
  /**
   * When the next deliverable item can be taken, on the caller's clock (`:now`): items queued
   * behind an earlier post do not count. The end of a claim is the store's time, so it is moved
   * onto the caller's clock by the time it has left.
   */
  nextOutboxAt: `
    SELECT MIN(CASE WHEN o.claimed_until > {{now}} AND o.claimed_until - {{now}} + :now > o.next_attempt_at
      THEN o.claimed_until - {{now}} + :now ELSE o.next_attempt_at END) AS at
    FROM outbox o WHERE o.delivered_at IS NULL AND o.dead_at IS NULL AND ${NEXT_IN_LINE}`,
} as const;

/**
 * Queues outbox items in the caller's transaction: the change or the insert that asks for them,
 * or an enqueue of its own. An item whose dedupe key is queued already is left out.
 */
export function* enqueueAll(items: NewOutboxItem[], now: number): Operation<void> {
  for (const { jobId, dedupeKey, payload } of items) {
    const kind = payload.type;
    yield* tx.write('enqueue', { jobId, dedupeKey, kind, payload: JSON.stringify(payload), now });
  }
}

/** The outbox's methods, written once for both engines over their {@link Engine}. */
export function outboxMethods(engine: Engine): OutboxStore {
  return {
    enqueue: (items, now) => engine.transaction(enqueueAll(items, now)),
    dueOutbox: async (now, limit) => engine.many('dueOutbox', { now, limit }, parseOutboxItem),
    updateOutbox: async (id, patch, instanceId) =>
      (await engine.update('outbox', id, patch, instanceId)) === 1,
    nextOutboxAt: async (now) => (await engine.one('nextOutboxAt', { now }, parseAt))?.at ?? undefined,
    latestCardUpdate: async (jobId) =>
      (await engine.one('latestCardUpdate', { jobId }, parseMaxId))?.id ?? undefined,
    async supersedeCardUpdates(jobId, uptoId, instanceId, now) {
      await engine.write('supersedeCardUpdates', { jobId, uptoId, instanceId, now });
    },
  };
}
