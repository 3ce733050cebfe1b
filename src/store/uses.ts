import { parseCountedUses, parseProjectUses } from './rows.js';
import type { Statements } from './statements.js';
import type { UseQuota, UseReservation, UsesStore } from './types.js';

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

/** Uses per project as {@link UsesStore.instructionsSince} reports them, from the statement's rows. */
export const usesPerProject = (rows: { projectId: string | null; n: number }[]) =>
  rows.map((row) => ({ projectId: row.projectId, count: row.n }));

/**
 * The uses read by one statement each, written once for both engines over their
 * {@link Statements}; `reserveUse` (a check and a write serialised per person and project) stays
 * with each engine's transaction.
 */
export function useReadMethods(
  run: Pick<Statements, 'one' | 'many'>,
): Pick<UsesStore, 'instructionsSince' | 'recentInstructions'> {
  return {
    instructionsSince: async (since) =>
      usesPerProject(await run.many('instructionsSince', { since }, parseProjectUses)),
    async recentInstructions(userId, since) {
      const row = await run.one('recentInstructions', { userId, since }, parseCountedUses);
      return { count: row?.n ?? 0, oldest: row?.oldest ?? null };
    },
  };
}
