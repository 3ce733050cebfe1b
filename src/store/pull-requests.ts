import { z } from 'zod';
import { AT_REST, sqlList } from '../domain/phases.js';
import { enqueueAll } from './outbox.js';
import type {
  NewPullRequest,
  PullRequestCandidate,
  PullRequestPatch,
  PullRequestRecord,
  PullRequestsStore,
} from './pull-request-records.js';
import type { NewOutboxItem } from './records.js';
import { parseAt, parsePullRequest, type Row } from './rows.js';
import { type Engine, type Operation, tx } from './statements.js';

/**
 * The statements and methods of pull requests followed (`pull-request-records.ts` has the rows
 * and the role): one text for SQLite and PostgreSQL (see `queries.ts`). Claims are timed by
 * `{{now}}`, the store's clock, as the poll claims of `cluster-store.ts` are; `:now` is a due time.
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

const parseCandidate = (row: Row): PullRequestCandidate =>
  z
    .object({
      job_id: z.number().int(),
      project_id: z.string().nullable(),
      pr_link: z.string(),
      updated_at: z.number().int(),
    })
    .transform((r) => ({
      jobId: r.job_id,
      projectId: r.project_id,
      prLink: r.pr_link,
      updatedAt: r.updated_at,
    }))
    .parse(row);

// COUNT is a number on both engines; AVG is PostgreSQL's numeric, which pg hands over as text.
const parseCounts = (row: Row) =>
  z
    .object({
      project_id: z.string().nullable(),
      opened: z.coerce.number(),
      merged: z.coerce.number(),
      closed_unmerged: z.coerce.number(),
      still_open: z.coerce.number(),
    })
    .parse(row);
const parseMedian = (row: Row) =>
  z.object({ project_id: z.string().nullable(), median_ms: z.coerce.number() }).parse(row);

/** One pull request found on a job, recorded with what it queues; undefined when on record already. */
function* followOne(pr: NewPullRequest, now: number): Operation<PullRequestRecord | undefined> {
  const recorded = yield* tx.one(
    'insertPullRequest',
    {
      jobId: pr.jobId,
      projectId: pr.projectId,
      url: pr.url,
      owner: pr.where?.owner ?? null,
      repo: pr.where?.repo ?? null,
      number: pr.where?.number ?? null,
      following: pr.where ? 'following' : 'other_host',
      openedAt: pr.openedAt,
      // Checked at once: the card shows it from the host's first answer.
      nextCheckAt: pr.where ? now : null,
      now,
    },
    parsePullRequest,
  );
  if (!recorded) return undefined;
  yield* tx.write('replacePullRequests', { jobId: pr.jobId, id: recorded.id, now });
  yield* enqueueAll(pr.enqueue, now);
  return recorded;
}

function* followAll(found: NewPullRequest[], now: number): Operation<PullRequestRecord[]> {
  const recorded: PullRequestRecord[] = [];
  for (const pr of found) {
    const one = yield* followOne(pr, now);
    if (one) recorded.push(one);
  }
  return recorded;
}

function* recordCheck(
  id: number,
  instanceId: string,
  patch: PullRequestPatch,
  enqueue: NewOutboxItem[],
  now: number,
): Operation<boolean> {
  const changed = yield* tx.update(
    'pull_requests',
    id,
    { ...patch, claimedBy: null, claimedUntil: null, updatedAt: now },
    instanceId,
  );
  if (changed !== 1) return false;
  yield* enqueueAll(enqueue, now);
  return true;
}

/** The pull request methods, written once for both engines over their {@link Engine}. */
export function pullRequestMethods(engine: Engine): PullRequestsStore {
  return {
    pullRequestCandidates: async (since, limit) =>
      engine.many('pullRequestCandidates', { since, limit }, parseCandidate),
    followPullRequests: (found, now) => engine.transaction(followAll(found, now)),
    claimDuePullRequests: async (instanceId, now, limit, leaseMs) =>
      engine.many('claimDuePullRequests', { instanceId, now, limit, leaseMs }, parsePullRequest),
    nextPullRequestCheckAt: async (now) =>
      (await engine.one('nextPullRequestCheckAt', { now }, parseAt))?.at ?? undefined,
    recordPullRequestCheck: (id, instanceId, patch, enqueue, now) =>
      engine.transaction(recordCheck(id, instanceId, patch, enqueue, now)),
    async releasePullRequest(id, instanceId) {
      await engine.write('releasePullRequest', { id, instanceId });
    },
    async pauseFollowing(until) {
      await engine.write('pauseFollowing', { until });
    },
    pullRequestOfJob: async (jobId) => engine.one('pullRequestOfJob', { jobId }, parsePullRequest),
    async pullRequestSummaries() {
      const medians = new Map(
        (await engine.many('pullRequestMedians', {}, parseMedian)).map((m) => [m.project_id, m.median_ms]),
      );
      return (await engine.many('pullRequestCounts', {}, parseCounts)).map((c) => ({
        projectId: c.project_id,
        opened: c.opened,
        merged: c.merged,
        closedUnmerged: c.closed_unmerged,
        stillOpen: c.still_open,
        medianMergeMs: medians.has(c.project_id) ? Math.round(medians.get(c.project_id) as number) : null,
      }));
    },
  };
}
