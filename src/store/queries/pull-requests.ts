import { AT_REST, sqlList } from '../../domain/phases.js';

/*
 * The statements of pull requests followed (`store/pull-requests.ts`); one text for SQLite and
 * PostgreSQL (see `queries.ts`). Claims are timed by `{{now}}`, the store's clock, as the poll
 * claims of `queries/cluster.ts` are; `:now` is a due time.
 */

const UNCLAIMED = '(claimed_until IS NULL OR claimed_until <= {{now}})';

/** The statements of pull requests followed; one text for SQLite and PostgreSQL (see `queries.ts`). */
export const PULL_REQUEST_QUERIES = {
  /** Served by `jobs_finished` (its predicate is the same set of phases). */
  pullRequestCandidates: `
    SELECT j.id AS job_id, j.project_id AS project_id, j.pr_link AS pr_link, j.updated_at AS updated_at
    FROM jobs j
    WHERE j.phase IN (${sqlList(AT_REST)}) AND j.updated_at >= :since
      AND j.last_outcome = 'completed_pr' AND j.pr_link IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM pull_requests p WHERE p.job_id = j.id AND p.url = j.pr_link)
    ORDER BY j.updated_at LIMIT :limit`,
  insertPullRequest: `
    INSERT INTO pull_requests (job_id, project_id, url, owner, repo, number, following, opened_at,
      next_check_at, updated_at)
    VALUES (:jobId, :projectId, :url, :owner, :repo, :number, :following, :openedAt, :nextCheckAt, :now)
    ON CONFLICT (job_id, url) DO NOTHING
    RETURNING *`,
  replacePullRequests: `
    UPDATE pull_requests SET following = 'replaced', next_check_at = NULL, updated_at = :now
    WHERE job_id = :jobId AND id <> :id AND following = 'following'`,
  /** Served by `pull_requests_due`; locked rows skipped on PostgreSQL, as `claimDueJobs` does. */
  claimDuePullRequests: `
    UPDATE pull_requests SET claimed_by = :instanceId, claimed_until = {{now}} + :leaseMs
    WHERE id IN (
      SELECT id FROM pull_requests
      WHERE next_check_at IS NOT NULL AND next_check_at <= :now AND ${UNCLAIMED}
      ORDER BY next_check_at, id LIMIT :limit
      {{lock}})
    RETURNING *`,
  nextPullRequestCheckAt: `
    SELECT MIN(next_check_at) AS at FROM pull_requests
    WHERE next_check_at IS NOT NULL AND ${UNCLAIMED}`,
  releasePullRequest: `
    UPDATE pull_requests SET claimed_by = NULL, claimed_until = NULL
    WHERE id = :id AND claimed_by = :instanceId`,
  pauseFollowing: `
    UPDATE pull_requests SET next_check_at = :until
    WHERE next_check_at IS NOT NULL AND next_check_at < :until`,
  pullRequestOfJob: 'SELECT * FROM pull_requests WHERE job_id = :jobId ORDER BY id DESC LIMIT 1',
  pullRequestCounts: `
    SELECT project_id,
      COUNT(*) AS opened,
      COUNT(CASE WHEN state = 'merged' THEN 1 END) AS merged,
      COUNT(CASE WHEN state = 'closed' THEN 1 END) AS closed_unmerged,
      COUNT(CASE WHEN (state IS NULL OR state = 'open') AND following = 'following' THEN 1 END)
        AS still_open
    FROM pull_requests WHERE following <> 'other_host'
    GROUP BY project_id`,
  /** The middle one (or the mean of the middle two) of each project's times to merge. */
  pullRequestMedians: `
    SELECT project_id, AVG(took) AS median_ms FROM (
      SELECT project_id, ended_at - opened_at AS took,
        ROW_NUMBER() OVER (PARTITION BY project_id ORDER BY ended_at - opened_at, id) AS place,
        COUNT(*) OVER (PARTITION BY project_id) AS n
      FROM pull_requests WHERE state = 'merged' AND ended_at IS NOT NULL) merges
    WHERE place IN ((n + 1) / 2, (n + 2) / 2)
    GROUP BY project_id`,
} as const;
