import type { NewOutboxItem } from './records.js';

/**
 * Pull requests followed to their end: one row per pull request a job's run opened, with what its
 * host last said of it. The host's client, the loop that checks them and what the card says of
 * them are `src/pull-requests/`; these are the rows as stored, claimed, counted and reported, and the store's role over them
 * (its statements and methods are `pull-requests.ts`).
 */

/** What the host last said of a pull request. */
export type PullRequestState = 'open' | 'merged' | 'closed';

/**
 * How far following a pull request got:
 * - `following`: checked until it is merged or closed, or the bound passes;
 * - `ended`: it was merged or closed (its state says which);
 * - `expired`: the bound passed while it was still open (no longer followed);
 * - `missing`: the host no longer finds it (404: the repository or the pull request was deleted);
 * - `refused`: the host refused the bot's token for it (401, or a 403 that is no rate limit);
 * - `replaced`: a later run of its job opened another pull request, which is followed instead;
 * - `other_host`: its link is not on the host this bot reads, so it is not followed.
 */
export type PullRequestFollowing =
  | 'following'
  | 'ended'
  | 'expired'
  | 'missing'
  | 'refused'
  | 'replaced'
  | 'other_host';

export interface PullRequestRecord {
  id: number;
  jobId: number;
  /** The job's documentation project (null: the default one), for the figures per project. */
  projectId: string | null;
  /** The link the agent API reported (it passed the link rule, `PR_LINK_HOSTS`). */
  url: string;
  /** Where it is on the host; null when it is not followed (`other_host`). */
  owner: string | null;
  repo: string | null;
  number: number | null;
  /** Null until the host first answered. */
  state: PullRequestState | null;
  following: PullRequestFollowing;
  /** Its title as the host last gave it: hostile text, escaped wherever it is shown. */
  title: string | null;
  /** The login of who merged it, checked to be a login's syntax: shown as text, never a mention. */
  mergedBy: string | null;
  /** When it was merged (the host's `merged_at`) or seen closed (epoch ms). */
  endedAt: number | null;
  /** The ETag of the host's last full answer, sent back as If-None-Match. */
  etag: string | null;
  /** When its run's outcome was recorded: the start of its time to merge and of the bound. */
  openedAt: number;
  /** When it is next checked; null once it is no longer followed. */
  nextCheckAt: number | null;
  /** Checks in a row that got no answer (an outage): the next one backs off. */
  checkFailures: number;
  claimedBy: string | null;
  claimedUntil: number | null;
  updatedAt: number;
}

/** A pull request to follow (or, `where` null, to show as not followed), found on a job. */
export interface NewPullRequest {
  jobId: number;
  projectId: string | null;
  url: string;
  where: { owner: string; repo: string; number: number } | null;
  openedAt: number;
  /** What to queue with it, in the same write (its card's update). */
  enqueue: NewOutboxItem[];
}

/** A job whose latest run opened a pull request not yet on record. */
export interface PullRequestCandidate {
  jobId: number;
  projectId: string | null;
  prLink: string;
  updatedAt: number;
}

/** What a check learnt; written only while the checking instance's claim holds. */
export type PullRequestPatch = Partial<
  Pick<
    PullRequestRecord,
    'state' | 'following' | 'title' | 'mergedBy' | 'endedAt' | 'etag' | 'nextCheckAt' | 'checkFailures'
  >
>;

/**
 * One project's pull requests, renderer-free: for `/docs-agent status` and the App Home. Times in
 * milliseconds; `medianMergeMs` null when none was merged.
 */
export interface PullRequestSummary {
  projectId: string | null;
  opened: number;
  merged: number;
  /** Closed without merging. */
  closedUnmerged: number;
  /** Open and still followed. */
  stillOpen: number;
  /** From being opened (its run's outcome) to being merged, the median. */
  medianMergeMs: number | null;
}

/** Pull requests followed to their end. */
export interface PullRequestsStore {
  /** Jobs finished since `since` whose latest run opened a pull request not yet on record, oldest first. */
  pullRequestCandidates(since: number, limit: number): Promise<PullRequestCandidate[]>;
  /**
   * Records pull requests found on jobs, each with what it queues, in one write: one already on
   * record is left as it is; a new one of a job replaces the one of that job followed before.
   * Returns those recorded now.
   */
  followPullRequests(found: NewPullRequest[], now: number): Promise<PullRequestRecord[]>;
  /**
   * Claims followed pull requests whose check is due for `leaseMs` (the store's clock), soonest
   * first; on PostgreSQL, rows another instance is claiming are skipped.
   */
  claimDuePullRequests(
    instanceId: string,
    now: number,
    limit: number,
    leaseMs: number,
  ): Promise<PullRequestRecord[]>;
  /** When the next unclaimed followed pull request falls due (epoch ms), if any. */
  nextPullRequestCheckAt(now: number): Promise<number | undefined>;
  /**
   * Writes what a check learnt and queues `enqueue` in one write, ending the claim; false (and
   * nothing written) when the claim is no longer `instanceId`'s.
   */
  recordPullRequestCheck(
    id: number,
    instanceId: string,
    patch: PullRequestPatch,
    enqueue: NewOutboxItem[],
    now: number,
  ): Promise<boolean>;
  /** Ends `instanceId`'s claim on a pull request without writing anything else. */
  releasePullRequest(id: number, instanceId: string): Promise<void>;
  /** No followed pull request is checked before `until` (the host asked every client to wait). */
  pauseFollowing(until: number): Promise<void>;
  /** The job's pull request: the latest recorded (the one not replaced), if any. */
  pullRequestOfJob(jobId: number): Promise<PullRequestRecord | undefined>;
  /** Per project: opened, merged, closed unmerged, still open, and the median time to merge. */
  pullRequestSummaries(): Promise<PullRequestSummary[]>;
}
