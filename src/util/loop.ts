import type { Logger } from '../logging/logger.js';
import type { YieldGate } from './yield-gate.js';

/** A background loop that runs `step` repeatedly, sleeping when idle, until stopped. */
export interface Loop {
  start(): void;
  /** Stops taking new work and waits for the current step and tracked work to finish. */
  stop(): Promise<void>;
  /** Runs the next step now instead of after the idle sleep. */
  kick(): void;
  /** Keeps `work` in the set that {@link Loop.stop} waits for. */
  track(work: Promise<unknown>): void;
}

export interface LoopOptions {
  name: string;
  logger: Logger;
  /** Sleep between steps when the last one found nothing to do, in milliseconds. */
  idleMs: number;
  /** What each step waits for before it runs (Slack's requests go first); default: nothing. */
  gate?: YieldGate;
  /** One round of work; `busy: true` means run again at once. */
  step(): Promise<{ busy: boolean; sleepMs?: number }>;
}

export function createLoop(options: LoopOptions): Loop {
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> | undefined;
  let again = false;
  const tracked = new Set<Promise<unknown>>();

  const schedule = (ms: number) => {
    if (!running) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(run, ms);
  };

  function run() {
    timer = undefined;
    if (!running) return;
    if (current) {
      again = true;
      return;
    }
    current = (async () => {
      let next = options.idleMs;
      try {
        await options.gate?.clear();
        // Stopped while it waited: the step is not started (schedule below does nothing).
        const result = running ? await options.step() : { busy: false };
        if (result.busy) next = 0;
        else if (result.sleepMs !== undefined) next = Math.max(0, Math.min(result.sleepMs, options.idleMs));
      } catch (error) {
        options.logger.error(`${options.name} step failed`, { error });
      }
      current = undefined;
      if (again) {
        again = false;
        next = 0;
      }
      schedule(next);
    })();
  }

  return {
    start() {
      if (running) return;
      running = true;
      schedule(0);
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await current;
      await Promise.allSettled([...tracked]);
    },
    kick() {
      if (!running) return;
      if (current) again = true;
      else schedule(0);
    },
    track(work) {
      tracked.add(work);
      // Forgotten either way: a rejection is the caller's to handle, and must not surface here
      // as an unhandled one (which ends the process).
      const forget = () => void tracked.delete(work);
      work.then(forget, forget);
    },
  };
}

// How long to wait: for an answer, at most, and before trying again after a failure.

/** `work`'s answer, or undefined once `ms` milliseconds have passed (the work is not cancelled). */
export async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Exponential backoff: `firstMs` after the first failure, doubling with each further one, never
 * more than `maxMs`. The exponent is capped so a long-failing item cannot overflow to Infinity.
 */
export function backoffMs(firstMs: number, failures: number, maxMs: number): number {
  return Math.min(maxMs, firstMs * 2 ** Math.min(Math.max(failures - 1, 0), 30));
}
