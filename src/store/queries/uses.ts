/**
 * Statements that count and reserve uses of the agent API against the hourly limits, one text
 * for SQLite and PostgreSQL with `:name` parameters.
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
