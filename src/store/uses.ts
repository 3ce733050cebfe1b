import type { UseQuota, UseReservation } from './types.js';

/** Uses counted in the window, and when the oldest of them was reserved (epoch ms). */
export interface CountedUses {
  n: number;
  oldest: number | null;
}

/**
 * Whether one more use fits under both hourly limits; when the person's own limit is reached,
 * that is what they are told.
 */
export function useDecision(
  quota: UseQuota,
  user: CountedUses,
  project: CountedUses,
  now: number,
): UseReservation {
  const over = (limit: 'user' | 'project', counted: CountedUses, max: number): UseReservation | undefined =>
    Number(counted.n) >= max
      ? {
          reserved: false,
          limit,
          count: Number(counted.n),
          freeAt: Number(counted.oldest ?? now) + quota.windowMs,
        }
      : undefined;
  return (
    over('user', user, quota.perUser) ?? over('project', project, quota.perProject) ?? { reserved: true }
  );
}

/** Thrown when a use is reserved for a run the store does not hold. */
export class UnknownRunError extends Error {
  override name = 'UnknownRunError';
  constructor(runId: number) {
    super(`no run ${runId} in the store`);
  }
}
