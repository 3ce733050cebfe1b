import { parseAt, parseMaxId, parseOutboxItem } from './rows.js';
import type { Statements } from './statements.js';
import type { OutboxStore } from './types.js';

/**
 * The outbox's single-statement methods, written once for both engines over their
 * {@link Statements}; `enqueue` (several inserts in one transaction) stays with each engine.
 */
export function outboxMethods(run: Statements): Omit<OutboxStore, 'enqueue'> {
  return {
    dueOutbox: async (now, limit) => run.many('dueOutbox', { now, limit }, parseOutboxItem),
    updateOutbox: async (id, patch, instanceId) => (await run.update('outbox', id, patch, instanceId)) === 1,
    nextOutboxAt: async (now) => (await run.one('nextOutboxAt', { now }, parseAt))?.at ?? undefined,
    latestCardUpdate: async (jobId) =>
      (await run.one('latestCardUpdate', { jobId }, parseMaxId))?.id ?? undefined,
    async supersedeCardUpdates(jobId, uptoId, instanceId, now) {
      await run.write('supersedeCardUpdates', { jobId, uptoId, instanceId, now });
    },
  };
}
