import { parseCountedUses, parseProjectUses, parseReservation, parseUseOfRun } from './rows.js';
import { type Engine, type Operation, tx } from './statements.js';

/** Hourly limits one use of the agent API (a first instruction or a follow-up) is counted against. */
export interface UseQuota {
  /** Most uses one person may have in the window (`MAX_INSTRUCTIONS_PER_USER_PER_HOUR`). */
  perUser: number;
  /** Most uses of one documentation project in the window (the agent API allows 100 per hour). */
  perProject: number;
  /** The project that jobs recorded without one ran on. */
  defaultProject: string;
  /** Length of the rolling window, in milliseconds (an hour). */
  windowMs: number;
}

/** The answer of {@link UsesStore.reserveUse}. */
export type UseReservation =
  | { reserved: true }
  | {
      reserved: false;
      /** Which limit was reached: the person's, or the project's. */
      limit: 'user' | 'project';
      /** Uses counted in the window. */
      count: number;
      /** When the oldest counted use leaves the window (epoch ms): the earliest retry that can pass. */
      freeAt: number;
    };

/** Uses of the agent API counted against its hourly limits. */
export interface UsesStore {
  /**
   * Uses of the agent API counted since `since`, per project (null: the default project): runs
   * reserved with {@link UsesStore.reserveUse} that did not end `failed`, replies sent together as
   * one. What counts against the agent API's hourly limit.
   */
  instructionsSince(since: number): Promise<{ projectId: string | null; count: number }[]>;
  /**
   * Instructions (first instructions and follow-ups) of `userId` counted against the hourly
   * limit since `since` (reserved, not `failed`); `oldest` is the earliest one's reservation time.
   */
  recentInstructions(userId: string, since: number): Promise<{ count: number; oldest: number | null }>;
  /**
   * Counts a run as one use of the agent API, if its author and its job's project are both under
   * their limits: the check and the reservation happen in one transaction, serialised per person
   * and per project (also across instances), so a burst never gets past a limit. Reserving a run
   * already reserved succeeds again without counting it twice. A reserved run counts from
   * `now` for `quota.windowMs`, unless it ends `failed` (it surely never reached the agent).
   * Project uses count as {@link UsesStore.instructionsSince} does: replies sent together are one.
   */
  reserveUse(runId: number, quota: UseQuota, now: number): Promise<UseReservation>;
}

/**
 * Uses of the agent API counted and reserved against the hourly limits: the statements, one text
 * for SQLite and PostgreSQL with `:name` parameters (see `queries.ts`), and the methods over them.
 */

/**
 * What one use of the agent API is, per run: a run reserved and not yet sent is one; replies sent
 * together (one batch: one job, one send time) were one call.
 */
const USE = `CASE WHEN r.sent_at IS NULL THEN 'run ' || CAST(r.id AS TEXT)
      ELSE 'call ' || CAST(r.job_id AS TEXT) || ' ' || CAST(r.sent_at AS TEXT) END`;

export const USES_QUERIES = {
  /**
   * Served by `runs_reserved`: the uses of the agent API counted since `:since`, per project. A
   * reserved run counts until it ends `failed` (surely never sent).
   */
  instructionsSince: `
    SELECT uses.project_id AS project_id, COUNT(*) AS n FROM (
      SELECT DISTINCT j.project_id AS project_id, ${USE} AS use_key
      FROM runs r JOIN jobs j ON j.id = r.job_id
      WHERE r.reserved_at >= :since AND r.state <> 'failed') uses
    GROUP BY uses.project_id`,
  /** A person's uses counted since `:since`; served by `runs_reserved_by`. */
  recentInstructions: `
    SELECT COUNT(*) AS n, MIN(reserved_at) AS oldest FROM runs
    WHERE author_id = :userId AND reserved_at >= :since AND state <> 'failed'`,
  /** One project's uses counted since `:since`; jobs without a project run on `:defaultProject`. */
  projectUses: `
    SELECT COUNT(DISTINCT ${USE}) AS n, MIN(r.reserved_at) AS oldest
    FROM runs r JOIN jobs j ON j.id = r.job_id
    WHERE r.reserved_at >= :since AND r.state <> 'failed' AND COALESCE(j.project_id, :defaultProject) = :project`,
  /** Whom and which project a run's use counts against. */
  useOfRun: `
    SELECT r.author_id AS author_id, r.reserved_at AS reserved_at, COALESCE(j.project_id, :defaultProject) AS project
    FROM runs r JOIN jobs j ON j.id = r.job_id WHERE r.id = :runId`,
  /** A run's reservation, read again once the reservation is serialised (locked on PostgreSQL). */
  runReservation: 'SELECT reserved_at FROM runs WHERE id = :runId {{forUpdate}}',
  reserveRun: 'UPDATE runs SET reserved_at = :now WHERE id = :runId AND reserved_at IS NULL',
} as const;

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
 * Counts a run as one use if both limits allow (see `UsesStore.reserveUse`). The check and the
 * write are serialised per person and per project: on SQLite by its one writer, on PostgreSQL by
 * the locks, taken before the counts are read, so they include every reservation before this one.
 */
function* reserve(runId: number, quota: UseQuota, now: number): Operation<UseReservation> {
  const { defaultProject } = quota;
  const run = yield* tx.one('useOfRun', { runId, defaultProject }, parseUseOfRun);
  if (!run) throw new UnknownRunError(runId);
  yield* tx.lock('userUsesLockPostgres', { id: run.authorId });
  yield* tx.lock('projectUsesLockPostgres', { id: run.project });
  // Read again once serialised: another instance may have reserved the run meanwhile.
  const current = yield* tx.one('runReservation', { runId }, parseReservation);
  if (current && current.reservedAt !== null) return { reserved: true };
  const since = now - quota.windowMs;
  const none = { n: 0, oldest: null };
  const user = yield* tx.one('recentInstructions', { userId: run.authorId, since }, parseCountedUses);
  const project = yield* tx.one(
    'projectUses',
    { since, defaultProject, project: run.project },
    parseCountedUses,
  );
  const decision = useDecision(quota, user ?? none, project ?? none, now);
  if (decision.reserved) yield* tx.write('reserveRun', { runId, now });
  return decision;
}

/** The uses, written once for both engines over their {@link Engine}. */
export function useMethods(engine: Engine): UsesStore {
  return {
    instructionsSince: async (since) =>
      usesPerProject(await engine.many('instructionsSince', { since }, parseProjectUses)),
    async recentInstructions(userId, since) {
      const row = await engine.one('recentInstructions', { userId, since }, parseCountedUses);
      return { count: row?.n ?? 0, oldest: row?.oldest ?? null };
    },
    reserveUse: (runId, quota, now) => engine.transaction(reserve(runId, quota, now)),
  };
}
