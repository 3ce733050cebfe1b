import type { Logger } from '../logging/logger.js';
import { createLoop, type Loop } from '../util/loop.js';
import type { YieldGate } from '../util/yield-gate.js';
import type { Store } from './types.js';

/** How often background work checkpoints SQLite's write-ahead log, in milliseconds. */
export const CHECKPOINT_INTERVAL_MS = 1_000;

/**
 * The background loop that checkpoints the store ({@link Store.checkpoint}) once a second, each
 * time after the gate: a burst of commands starts with an almost empty log, and its inserts
 * seldom have to copy it into the database file.
 */
export function createCheckpointLoop(options: {
  store: Pick<Store, 'checkpoint'>;
  logger: Logger;
  gate?: YieldGate;
  intervalMs?: number;
}): Loop {
  return createLoop({
    name: 'store checkpoint',
    logger: options.logger,
    idleMs: options.intervalMs ?? CHECKPOINT_INTERVAL_MS,
    ...(options.gate ? { gate: options.gate } : {}),
    async step() {
      await options.store.checkpoint();
      return { busy: false };
    },
  });
}
