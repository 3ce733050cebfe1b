import { failureBackoff, pollInterval } from '../poller/poller.js';

/** How the follower paces itself; the defaults are {@link FOLLOWING}. */
export interface FollowingPace {
  /** A pull request is followed this long after it was opened, then no longer (ms). */
  boundMs: number;
  /** Checks of a young pull request are this far apart (ms)… */
  firstIntervalMs: number;
  /** …until it is this old; then a tenth of its age apart… */
  youngForMs: number;
  /** …at most this far apart, which is also the longest backoff after failed checks (ms). */
  maxIntervalMs: number;
  /** How often jobs are looked at for pull requests their runs opened (ms). */
  lookEveryMs: number;
}

/**
 * A minute apart in a pull request's first hour, a tenth of its age after that, half an hour at
 * most: most pull requests of a docs change are merged or closed within a day, and one that
 * waits a week is late by little. Two weeks after it was opened, it is no longer followed.
 */
export const FOLLOWING: FollowingPace = {
  boundMs: 14 * 86_400_000,
  firstIntervalMs: 60_000,
  youngForMs: 3_600_000,
  maxIntervalMs: 30 * 60_000,
  lookEveryMs: 10_000,
};

/** How long after a healthy check of a pull request `ageMs` old the next one comes. */
export const checkInterval = (ageMs: number, pace: FollowingPace): number =>
  pollInterval(ageMs, pace.firstIntervalMs, pace.youngForMs, pace.maxIntervalMs);

/**
 * How long after `failures` checks in a row that got no answer (an outage) the next one comes:
 * doubling from the first interval up to the longest, so an outage delays the news and never
 * floods the host.
 */
export const failedCheckInterval = (failures: number, pace: FollowingPace): number =>
  failureBackoff(failures, pace.firstIntervalMs, pace.maxIntervalMs);

/**
 * The pace of `GITHUB_CHECK_EVERY_MS`: a young pull request checked every `everyMs`, finished
 * jobs looked at as often (never less often than {@link FOLLOWING} looks), the rest as
 * {@link FOLLOWING}; unset, {@link FOLLOWING} itself. The request budget still bounds the checks.
 */
export function paceOf(everyMs: number | undefined): FollowingPace {
  if (everyMs === undefined) return FOLLOWING;
  return {
    ...FOLLOWING,
    firstIntervalMs: everyMs,
    lookEveryMs: Math.min(everyMs, FOLLOWING.lookEveryMs),
    maxIntervalMs: Math.max(everyMs, FOLLOWING.maxIntervalMs),
  };
}
