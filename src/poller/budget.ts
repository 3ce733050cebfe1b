/** A pace for outgoing requests: at most a given number per second, spread evenly. */
export interface RequestBudget {
  /** Resolves when the next request may start; each call takes one slot, in call order. */
  take(): Promise<void>;
  /** Requests per second allowed now. */
  rate(): number;
}

/**
 * Spare room left between slots, as a share of the spacing, so that network jitter between the
 * caller and the API cannot squeeze one more request into any one-second window upstream.
 */
export const BUDGET_MARGIN = 0.01;

/**
 * Requests start `1 / rate` seconds apart (plus {@link BUDGET_MARGIN}), measured from when the
 * previous one actually started, so no one-second window ever holds more than `rate` (a late
 * timer cannot bunch two together) and a backlog drains evenly rather than in bursts. `rate` is
 * read at every slot, so it can follow the number of instances sharing the budget.
 */
export function createRequestBudget(options: {
  rate: () => number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}): RequestBudget {
  const now = options.now ?? (() => performance.now());
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  // When the latest slot started; each taker waits for the one before it.
  let previous: Promise<number> = Promise.resolve(Number.NEGATIVE_INFINITY);
  return {
    rate: options.rate,
    take() {
      const slot = previous.then(async (startedAt) => {
        const spacing = (1_000 / Math.max(options.rate(), 1e-3)) * (1 + BUDGET_MARGIN);
        const wait = startedAt + spacing - now();
        // Timers may fire up to a millisecond early; never start before the slot.
        if (wait > 0) await sleep(Math.ceil(wait));
        return now();
      });
      previous = slot;
      return slot.then(() => undefined);
    },
  };
}
