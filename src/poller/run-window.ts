import type { Logger } from '../logging/logger.js';
import type { RunLengthsStore } from '../store/types.js';
import { BoundedCache } from '../util/lru.js';

/**
 * Where a documentation project's latest runs ended, by a run's age: none ended before `fromMs`,
 * nearly all by `untilMs`. The poller looks densely inside it and not at all before it, so an
 * outcome comes as soon as under fixed polling for fewer GETs.
 */
export interface RunWindow {
  fromMs: number;
  untilMs: number;
}

/** How many of a project's latest runs are read: recent enough to follow how the agent works now. */
export const RUN_WINDOW_SAMPLE = 50;
/** Fewer finished runs than this say too little: the project is polled on the plain schedule. */
export const RUN_WINDOW_MIN_RUNS = 10;
/** How long a project's window is kept before its runs are read again, in milliseconds. */
export const RUN_WINDOW_TTL_MS = 5 * 60_000;
/** Margins around what was seen: a run a little shorter or longer than any before is still covered. */
const EARLIER = 0.9;
const LATER = 1.2;

/**
 * The window of a project whose latest runs took `lengths` milliseconds: from a little before the
 * shortest to a little after the 95th percentile (one run that went on for hours does not stretch
 * it). Undefined below {@link RUN_WINDOW_MIN_RUNS} runs.
 */
export function runWindow(lengths: readonly number[]): RunWindow | undefined {
  if (lengths.length < RUN_WINDOW_MIN_RUNS) return undefined;
  const sorted = [...lengths].sort((a, b) => a - b);
  const shortest = sorted[0] as number;
  const p95 = sorted[Math.ceil(0.95 * sorted.length) - 1] as number;
  return { fromMs: Math.round(EARLIER * shortest), untilMs: Math.round(LATER * p95) };
}

export interface RunWindows {
  /** The project's window (`projectId` null: the default project), or undefined when it has too few runs. */
  of(projectId: string | null): Promise<RunWindow | undefined>;
}

/**
 * Each project's window, read from the store at most once per {@link RUN_WINDOW_TTL_MS} (one read
 * at a time per project); a project whose runs could not be read is polled on the plain schedule.
 */
export function createRunWindows(deps: {
  store: Pick<RunLengthsStore, 'runLengths'>;
  logger: Logger;
  now: () => number;
}): RunWindows {
  const known = new BoundedCache<RunWindow | null>(1_000, RUN_WINDOW_TTL_MS, deps.now);
  const reading = new Map<string, Promise<RunWindow | undefined>>();
  return {
    of(projectId) {
      const key = projectId ?? '';
      const window = known.get(key);
      if (window !== undefined) return Promise.resolve(window ?? undefined);
      const pending = reading.get(key);
      if (pending) return pending;
      const read = deps.store
        .runLengths(projectId, RUN_WINDOW_SAMPLE)
        .then(runWindow, (error: unknown) => {
          deps.logger.warn('could not read how long the project’s runs take; polling on the plain schedule', {
            error,
          });
          return undefined;
        })
        .then((found) => {
          known.set(key, found ?? null);
          return found;
        })
        .finally(() => reading.delete(key));
      reading.set(key, read);
      return read;
    },
  };
}
