/**
 * The store's roles: each module outside the store asks for the roles it uses, and `Store` (in
 * `types.ts`) is all of them, which both engines implement.
 */

import type { JobPhase } from '../domain/phases.js';
import type {
  Change,
  JobRecord,
  NewFollowUp,
  NewJob,
  NewOutboxItem,
  NewRun,
  OutboxItem,
  OutboxPatch,
  RunRecord,
} from './records.js';

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

/** What one {@link RetentionStore.eraseExpired} call did. */
export interface Erased {
  /** Jobs whose instruction, prompts and response_url were erased. */
  jobs: number;
  /** Delivered (or abandoned) outbox items deleted. */
  outboxItems: number;
  /** App Home visits forgotten. */
  homeViews: number;
  /** Assistant threads (and the channel their pane was beside) forgotten. */
  assistantThreads: number;
}

/** What the metrics endpoint reads from the store at each scrape (see {@link ReportsStore.figures}). */
export interface StoreFigures {
  /** Uses of the agent API counted since the given time, per project, as {@link UsesStore.instructionsSince}. */
  uses: { projectId: string | null; count: number }[];
  /** Jobs in phase `active`: the agent is working on their latest run. */
  activeJobs: number;
  /** Earliest next-poll time among active jobs, claimed or not (epoch ms); null when none is active. */
  earliestPollAt: number | null;
  /** Outbox items neither delivered nor given up. */
  outboxBacklog: number;
  /** When the oldest of those was queued (epoch ms); null when there is none. */
  oldestUndeliveredAt: number | null;
  /** Instances heard from within the instance time-out, as `ClusterStore.liveInstances`. */
  liveInstances: number;
}

/** How the store is shared, kept and closed, whatever it holds. */
export interface StoreLifecycle {
  /**
   * Whether several processes may use the store at once (a database server). When false (the
   * embedded SQLite file) any other instance on record is an earlier process that is gone.
   */
  readonly shared: boolean;
  /**
   * Does what {@link JobsStore.insertJob} does for `job` and rolls it back: nothing stays, and no one
   * sees it. Rehearsed before the app says it is ready (see `rehearsal.ts`).
   */
  rehearseInsert(job: NewJob, firstRun: NewRun, now: number): Promise<void>;
  /**
   * Copies SQLite's write-ahead log into the database file without waiting on readers; nothing
   * to do on PostgreSQL. SQLite does it on its own in the write that fills 1,000 pages, and that
   * write waits for the copy and a sync of the file: background work calls this when Slack is
   * quiet, so that the log seldom fills during a burst of commands.
   */
  checkpoint(): Promise<void>;
  close(): Promise<void>;
}

/** Jobs: recorded, found, moved between phases, changed, and polled. */
export interface JobsStore {
  /**
   * Inserts a job and its first run; an existing trigger key returns the existing job. A thread
   * holds one job: a job already in `threadTs` is returned instead, unless it never ran or the
   * agent API forgot it (`not_started`, `gone`), which gives the thread up to the new job.
   * A job that `replaces` another (a retry) moves it first: when that job was no longer where
   * the caller saw it, the retry recorded before is returned (`created` false), or else the
   * replaced job itself, as it is now.
   */
  insertJob(
    job: NewJob,
    firstRun: NewRun,
    now: number,
  ): Promise<{ job: JobRecord; run: RunRecord; created: boolean }>;
  /** Moves a job from one phase to another; false if it was not in `from` (someone else moved it). */
  transitionJob(jobId: number, from: JobPhase, to: JobPhase, now: number): Promise<boolean>;
  getJob(id: number): Promise<JobRecord | undefined>;
  findJobByThread(channelId: string, threadTs: string): Promise<JobRecord | undefined>;
  /**
   * The thread of the job in which this message of the channel is an instruction still open (its
   * run pending, ready or sending); undefined when there is none. For a deletion Slack reports by
   * the message's ts alone.
   */
  threadOfOpenMessage(channelId: string, messageTs: string): Promise<string | undefined>;
  /**
   * Applies several changes in one transaction (one commit for many small writes); each result
   * as {@link JobsStore.apply}'s.
   */
  applyAll(changes: Change[], now: number): Promise<boolean[]>;
  /** Applies the change atomically; false (and nothing written) when `expect` did not hold. */
  apply(change: Change, now: number): Promise<boolean>;
  /** Active jobs whose next poll is due and that nobody is polling, soonest first (next-poll index). */
  dueJobs(now: number, limit: number): Promise<JobRecord[]>;
  /** When the next unclaimed active job falls due (epoch ms), if any. */
  nextDueAt(now: number): Promise<number | undefined>;
  /** A person's (`requesterId`) or a channel's most recent jobs, newest first. */
  recentJobs(filter: { requesterId: string } | { channelId: string }, limit: number): Promise<JobRecord[]>;
  /** Records the status emoji on the thread's root without touching the job's change time. */
  setRootReaction(jobId: number, name: string | null): Promise<void>;
  /** Records the agent session status shown on the job's thread, without touching its change time. */
  setSessionStatus(jobId: number, status: string): Promise<void>;
  countActiveJobs(): Promise<number>;
}

/** Runs of a job: its first instruction and the follow-ups after it. */
export interface RunsStore {
  /** Inserts a follow-up run; the same source twice (the same run key) returns the existing run. */
  insertFollowUp(jobId: number, run: NewFollowUp, now: number): Promise<{ run: RunRecord; created: boolean }>;
  /** Moves a run from `pending` to `sending`; false if another caller already did. */
  claimRun(runId: number, now: number): Promise<boolean>;
  getRun(id: number): Promise<RunRecord | undefined>;
  getRuns(jobId: number): Promise<RunRecord[]>;
  /** Follow-ups recorded while the job did not yet exist upstream. */
  pendingRuns(jobId: number): Promise<RunRecord[]>;
  /** Checked follow-ups of a job waiting to be sent, oldest first. */
  readyRuns(jobId: number): Promise<RunRecord[]>;
}

/** The outbox: what is still to be posted to Slack, and the status card updates among it. */
export interface OutboxStore {
  enqueue(items: NewOutboxItem[], now: number): Promise<void>;
  /**
   * Undelivered outbox items that are due and not claimed, oldest first. Thread posts of one job
   * come out one at a time, in order; root updates, reactions and private replies are independent.
   */
  dueOutbox(now: number, limit: number): Promise<OutboxItem[]>;
  /**
   * Ends or records a delivery attempt of `instanceId`; refused (false, nothing written) when its
   * claim on the item was taken over.
   */
  updateOutbox(id: number, patch: OutboxPatch, instanceId?: string): Promise<boolean>;
  /**
   * Earliest time (on the caller's clock, `now`) an undelivered item not queued behind another
   * can be taken: its next attempt, or the end of another instance's claim on it. Undefined when
   * there is none.
   */
  nextOutboxAt(now: number): Promise<number | undefined>;
  /** Id of the job's newest undelivered status card update, if any. */
  latestCardUpdate(jobId: number): Promise<number | undefined>;
  /**
   * Marks the job's undelivered card updates up to `uptoId` delivered at `now` (one update that
   * rendered the job after they were queued covers them), except those another instance has claimed.
   */
  supersedeCardUpdates(jobId: number, uptoId: number, instanceId: string, now: number): Promise<void>;
}

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

/** Who opened the App Home. */
export interface HomeViewsStore {
  /** Remembers that a person opened the App Home, so their jobs' changes refresh it. */
  recordHomeOpened(userId: string, teamId: string | null, now: number): Promise<void>;
  homeOpened(userId: string): Promise<boolean>;
}

/** Threads of Slack's assistant pane and the channel beside each. */
export interface AssistantThreadsStore {
  /**
   * Records an assistant thread (a direct message thread in Slack's assistant pane) and the
   * channel its pane is open beside (null: none). `at` is the Slack event's time (epoch ms): an
   * older event never overwrites a newer one.
   */
  recordAssistantThread(
    thread: { channelId: string; threadTs: string; contextChannelId: string | null },
    at: number,
  ): Promise<void>;
  /**
   * Marks an assistant thread used at `at` (epoch ms): its `updated_at` moves forward to `at`,
   * never back, and its channel is left as it is. The retention sweep forgets a thread neither
   * Slack nor its use has touched since its cutoff. Nothing happens to a thread not recorded.
   */
  touchAssistantThread(thread: { channelId: string; threadTs: string }, at: number): Promise<void>;
  /** The assistant thread, if Slack reported one with this channel and ts. */
  assistantThread(
    channelId: string,
    threadTs: string,
  ): Promise<{ contextChannelId: string | null } | undefined>;
}

/** What the metrics endpoint reads at each scrape. */
export interface ReportsStore {
  /**
   * The deployment-wide figures the metrics endpoint shows: agent API uses since `usesSince`,
   * active jobs and the most overdue poll, the outbox backlog and its oldest item, and instances
   * heard from lately. Read-only; served by the partial indexes on due jobs,
   * undelivered outbox items and reserved runs, so its cost follows the work in flight, not the
   * size of the history. Instances count as live when heard from within `instanceTimeoutMs`.
   */
  figures(usesSince: number, instanceTimeoutMs: number): Promise<StoreFigures>;
}

/** Forgetting what is kept no longer than needed. */
export interface RetentionStore {
  /**
   * Retention: for jobs finished (idle, not started, start unknown or gone; no run open, nothing
   * left to deliver) and unchanged since before `before`, replaces the instruction with
   * `erasedInstruction`, empties every run's prompt (which carries thread context and follow-up
   * texts) and forgets the response_url. The job row, its thread and its ids stay, so a reply in
   * an old thread still finds its job. Also deletes outbox items delivered or abandoned before
   * `before`, and App Home visits and assistant threads last heard of before then. Handles at most `limit` jobs and `limit`
   * outbox items per call; call again while it reports that many.
   */
  eraseExpired(before: number, erasedInstruction: string, now: number, limit: number): Promise<Erased>;
}
