/** A pace for outgoing requests: at most a given number per second, spread evenly. */
export interface RequestBudget {
  /** Resolves when the next request may start; each call takes one slot, in call order. */
  take(): Promise<void>;
  /** Requests per second allowed now. */
  rate(): number;
}

/**
 * Spare room, as a share of a second: at most `rate` requests start in any window this much
 * longer than a second, so that network jitter between the caller and the API cannot squeeze
 * one more into any one-second window upstream.
 */
export const BUDGET_MARGIN = 0.02;
/** How late a timer may fire, in milliseconds, before the pace stops making up for it. */
const TIMER_SLACK_MS = 5;

/**
 * Requests are paced `1 / rate` seconds apart on a steady timeline (a timer that fires late is
 * made up for by the next slot, so the rate holds even when the spacing is a few milliseconds),
 * and a sliding window over the actual starts guarantees that no window of a second (plus
 * {@link BUDGET_MARGIN}) ever holds more than `rate`. A backlog drains evenly, never in a
 * burst. `rate` is read at every slot, so it can follow the number of instances sharing it.
 */
export function createRequestBudget(options: {
  rate: () => number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}): RequestBudget {
  const now = options.now ?? (() => performance.now());
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const windowMs = 1_000 * (1 + BUDGET_MARGIN);
  /** Actual start times of the latest slots, oldest first (at most `rate` kept). */
  const starts: number[] = [];
  /** Where the previous start sits on the steady timeline. */
  let last = Number.NEGATIVE_INFINITY;
  let previous: Promise<void> = Promise.resolve();

  async function slot(): Promise<void> {
    const rate = Math.max(options.rate(), 1e-3);
    const cap = Math.max(1, Math.floor(rate));
    const paceAt = last + 1_000 / rate;
    for (;;) {
      const t = now();
      // The window is strict: never one more than `rate` in it.
      const oldest =
        starts.length >= cap ? (starts[starts.length - cap] as number) : Number.NEGATIVE_INFINITY;
      if (oldest + windowMs > t) {
        await sleep(Math.ceil(oldest + windowMs - t));
        continue;
      }
      // The pace is kept on average: a start less than a millisecond early (timers cannot wait
      // less) is made up for by the slots after it.
      if (paceAt - t >= 1) {
        await sleep(Math.floor(paceAt - t));
        continue;
      }
      break;
    }
    const startedAt = now();
    starts.push(startedAt);
    if (starts.length > cap) starts.splice(0, starts.length - cap);
    // Stay on the steady timeline when this start was late only by timer slack; after an idle
    // spell the pace restarts from now, so no burst catches up.
    last = startedAt - paceAt <= TIMER_SLACK_MS ? paceAt : startedAt;
  }

  return {
    rate: options.rate,
    take() {
      const mine = previous.then(slot);
      previous = mine.catch(() => undefined);
      return mine;
    },
  };
}
