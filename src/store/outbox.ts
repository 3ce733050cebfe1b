import type { NewOutboxItem } from './records.js';
import { parseAt, parseMaxId, parseOutboxItem } from './rows.js';
import { type Engine, type Operation, tx } from './statements.js';
import type { OutboxStore } from './types.js';

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
