import { parseRunLength } from './rows.js';
import type { Statements } from './statements.js';

/**
 * How long a documentation project's runs take: what the poller reads to poll densely where the
 * project's runs usually end and sparsely where none did (`poller/run-window.ts`).
 */
export interface RunLengthsStore {
  /**
   * How long the project's latest runs the agent ended itself (a pull request, no changes, a
   * failure) took, from being sent to the agent until their outcome was seen, newest first, at most
   * `limit`. `projectId` null: the default project.
   */
  runLengths(projectId: string | null, limit: number): Promise<number[]>;
}

/** Outcomes the agent ends a run with itself; archived, gone or unwatched runs say nothing of its length. */
const ENDED_BY_AGENT = "('completed_pr', 'completed_no_changes', 'failed')";

export const RUN_LENGTH_QUERIES = {
  runLengths: `
    SELECT r.outcome_at - r.sent_at AS length_ms
    FROM runs r JOIN jobs j ON j.id = r.job_id
    WHERE r.outcome_at IS NOT NULL AND r.sent_at IS NOT NULL AND r.outcome IN ${ENDED_BY_AGENT}
      AND COALESCE(j.project_id, '') = :project
    ORDER BY r.outcome_at DESC
    LIMIT :limit`,
} as const;

/** The run lengths' method, written once for both engines over their {@link Statements}. */
export function runLengthMethods(run: Pick<Statements, 'many'>): RunLengthsStore {
  return {
    async runLengths(projectId, limit) {
      const rows = await run.many('runLengths', { project: projectId ?? '', limit }, parseRunLength);
      return rows.map((row) => row.lengthMs);
    },
  };
}
