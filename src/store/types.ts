/**
 * The store: the bot's only record of which Slack thread belongs to which agent job (the agent
 * API has no list endpoint). Async so an implementation on a database server can replace the
 * embedded SQLite one without touching callers. All times are epoch milliseconds.
 */

import type { JobPhase } from '../jobs/phases.js';

// The job's phases, their named sets and their transitions live with the job rules.
export { type JobPhase, THREAD_RELEASING_PHASES } from '../jobs/phases.js';

/** Where a job was started: the slash command, an @mention, or the message shortcut. */
export type JobOrigin = 'command' | 'mention' | 'shortcut';

export interface JobRecord {
  id: number;
  teamId: string;
  channelId: string;
  /**
   * ts of the thread's root message: the job's thread. The bot's own root message for a slash
   * command (null until posted); the existing message for a job started inside a conversation.
   */
  threadTs: string | null;
  /** ts of the bot's status card: the root itself for a command, a reply in the thread otherwise. */
  cardTs: string | null;
  origin: JobOrigin;
  /** The documentation project the job runs on; null means the deployment's default project. */
  projectId: string | null;
  /** When set, the thread's messages before this ts are given to the agent as context. */
  contextTs: string | null;
  /** The status emoji the bot last put on the thread's root message. */
  rootReaction: string | null;
  requesterId: string;
  /** The instruction as the user typed it (Slack mrkdwn). */
  instruction: string;
  /** Unique per user action (slash command trigger id), so a repeat never makes a second job. */
  triggerKey: string;
  /** Slack's response_url for private replies to the requester, valid 30 minutes. */
  responseUrl: string | null;
  agentJobId: string | null;
  phase: JobPhase;
  /** Last status the agent API reported (may be a value the API added later). */
  agentStatus: string | null;
  prLink: string | null;
  /** Outcome of the latest finished run, shown on the root message. */
  lastOutcome: RunOutcome | null;
  repository: string | null;
  ref: string | null;
  model: string | null;
  /** Number of runs: the first instruction and each follow-up that reached the agent. */
  runCount: number;
  nextPollAt: number | null;
  /** Current backoff interval between polls. */
  pollIntervalMs: number;
  /** Consecutive failed polls. */
  pollFailures: number;
  /** When the current run was sent to the agent. */
  runStartedAt: number | null;
  lastError: string | null;
  /** Instance that accepted the job; it alone starts it while it is alive. */
  owner: string | null;
  /** Instance polling the job right now, until {@link JobRecord.claimedUntil}. */
  claimedBy: string | null;
  claimedUntil: number | null;
  /**
   * When the retention sweep last erased what people wrote in the job (its instruction, run
   * prompts, response_url); null while they are kept. The job row and its thread stay.
   */
  erasedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export type RunKind = 'create' | 'follow_up';
/**
 * - `pending`: recorded, not yet checked or sent.
 * - `ready`: a follow-up checked and waiting to be sent (for its batch window, or for the job to exist).
 * - `sending`: the request is being made; after a crash its effect is unknown.
 * - `sent`: the agent accepted it.
 * - `failed`: refused or not sent; the user was told.
 * - `unknown`: sent and the answer lost; the user was told.
 */
export type RunState = 'pending' | 'ready' | 'sending' | 'sent' | 'failed' | 'unknown';

/** Terminal outcome of a run, as posted to the thread. */
export type RunOutcome =
  | 'completed_pr'
  | 'completed_no_changes'
  | 'failed'
  | 'archived'
  | 'gone'
  | 'stopped_watching';

export interface RunRecord {
  id: number;
  jobId: number;
  /** 1 for the first instruction, then one more per follow-up. */
  seq: number;
  kind: RunKind;
  /** Plain-text prompt sent to the agent. */
  prompt: string;
  authorId: string;
  /** ts of the Slack message that carried a follow-up. */
  messageTs: string | null;
  state: RunState;
  error: string | null;
  outcome: RunOutcome | null;
  /** Instance that accepted the run; it alone sends it while it is alive. */
  owner: string | null;
  /** The author's workspace, when Slack named it (it differs from the job's in a shared channel). */
  teamId: string | null;
  createdAt: number;
  /**
   * When the run was counted against the hourly limits ({@link Store.reserveUse}); null until
   * then. A `failed` run (surely never reached the agent) no longer counts.
   */
  reservedAt: number | null;
  sentAt: number | null;
  outcomeAt: number | null;
}

export type NewJob = Pick<
  JobRecord,
  'teamId' | 'channelId' | 'requesterId' | 'instruction' | 'triggerKey' | 'responseUrl' | 'pollIntervalMs'
> &
  Partial<Pick<JobRecord, 'owner' | 'origin' | 'projectId' | 'threadTs' | 'contextTs'>>;

export type NewRun = Pick<RunRecord, 'kind' | 'prompt' | 'authorId' | 'messageTs'> & {
  jobId?: number;
  owner?: string | null;
  teamId?: string | null;
};

export type JobPatch = Partial<Omit<JobRecord, 'id' | 'createdAt' | 'teamId' | 'triggerKey' | 'owner'>>;
export type RunPatch = Partial<Pick<RunRecord, 'state' | 'error' | 'outcome' | 'sentAt' | 'outcomeAt'>>;

/** An outcome of a run, or a notice that an instruction did not (surely) reach the agent. */
export type PostKind = 'outcome' | 'notice';

export interface PostAbout {
  kind: PostKind;
  /** The run's sequence number in its job. */
  run: number | null;
  /** ts of the Slack message that carried the instruction, for follow-ups. */
  source: string | null;
  /** When several runs merged into one result: their sequence numbers, comma-separated. */
  covers?: string;
  /** …and their source message ts, comma-separated (empty for the first instruction). */
  sources?: string;
}

/** What an outbox item asks Slack to do. */
export type OutboxPayload =
  | {
      type: 'post';
      channel: string;
      threadTs: string;
      text: string;
      /** Written into the message's metadata so a re-post after a crash can be detected. */
      eventType: string;
      /** Which run the post is about, also written into the metadata (nothing secret). */
      about?: PostAbout;
      /** Block Kit layout; `text` stays the notification and screen-reader fallback. */
      blocks?: unknown[];
    }
  | { type: 'update_root'; channel: string; ts: string }
  | { type: 'reaction'; channel: string; ts: string; name: string }
  | {
      type: 'respond';
      responseUrl: string;
      text: string;
      /** Where to say it instead once the response_url has expired. */
      fallback?: { channel: string; user: string };
    }
  | { type: 'ephemeral'; channel: string; user: string; threadTs: string | null; text: string };

export interface NewOutboxItem {
  jobId: number | null;
  /** Unique: enqueueing the same key twice keeps the first. */
  dedupeKey: string | null;
  payload: OutboxPayload;
}

export interface OutboxItem extends NewOutboxItem {
  id: number;
  attempts: number;
  nextAttemptAt: number;
  /** Set when an attempt starts; a row with this set and no delivery may already be in Slack. */
  startedAt: number | null;
  deliveredAt: number | null;
  deadAt: number | null;
  lastError: string | null;
  /** Instance delivering the item right now, until {@link OutboxItem.claimedUntil}. */
  claimedBy: string | null;
  claimedUntil: number | null;
  createdAt: number;
}

export type OutboxPatch = Partial<
  Pick<
    OutboxItem,
    | 'attempts'
    | 'nextAttemptAt'
    | 'startedAt'
    | 'deliveredAt'
    | 'deadAt'
    | 'lastError'
    | 'claimedBy'
    | 'claimedUntil'
  >
>;

/** Work a stopped instance left half done, now owned by the instance that took it over. */
export interface Orphans {
  /** Jobs left `accepted`, `posting` or `creating`. */
  jobs: JobRecord[];
  /** Follow-ups left `pending` (never sent) or `sending` (sent, answer unknown). */
  runs: RunRecord[];
}

/** One atomic change: a job patch, optionally a run patch, and outbox items to enqueue. */
export interface Change {
  jobId: number;
  job?: JobPatch;
  run?: { id: number; patch: RunPatch };
  enqueue?: NewOutboxItem[];
  /** Further runs to patch in the same change. */
  runs?: { id: number; patch: RunPatch }[];
  /** Increment the job's run count (a run was accepted by the agent). */
  incrementRunCount?: boolean;
  /**
   * Apply only if the job still is as the caller saw it: a poll answer that arrives after a
   * follow-up started a new run must not close that run.
   */
  expect?: { phase: JobPhase; runCount: number };
}

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

/** The answer of {@link Store.reserveUse}. */
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

/** What one {@link Store.eraseExpired} call did. */
export interface Erased {
  /** Jobs whose instruction, prompts and response_url were erased. */
  jobs: number;
  /** Delivered (or abandoned) outbox items deleted. */
  outboxItems: number;
  /** App Home visits forgotten. */
  homeViews: number;
}

/** What the metrics endpoint reads from the store at each scrape (see {@link Store.figures}). */
export interface StoreFigures {
  /** Uses of the agent API counted since the given time, per project, as {@link Store.instructionsSince}. */
  uses: { projectId: string | null; count: number }[];
  /** Jobs in phase `active`: the agent is working on their latest run. */
  activeJobs: number;
  /** Earliest next-poll time among active jobs, claimed or not (epoch ms); null when none is active. */
  earliestPollAt: number | null;
  /** Outbox items neither delivered nor given up. */
  outboxBacklog: number;
  /** When the oldest of those was queued (epoch ms); null when there is none. */
  oldestUndeliveredAt: number | null;
  /** Instances heard from since the given time, as {@link Store.liveInstances}. */
  liveInstances: number;
}

export interface Store {
  /**
   * Whether several processes may use the store at once (a database server). When false (the
   * embedded SQLite file) any other instance on record is an earlier process that is gone.
   */
  readonly shared: boolean;
  /**
   * Inserts a job and its first run; an existing trigger key returns the existing job. A thread
   * holds one job: a job already in `threadTs` is returned instead, unless it never ran or the
   * agent API forgot it (`not_started`, `gone`), which gives the thread up to the new job.
   */
  insertJob(
    job: NewJob,
    firstRun: NewRun,
    now: number,
  ): Promise<{ job: JobRecord; run: RunRecord; created: boolean }>;
  /** Inserts a follow-up run; the same message twice returns the existing run. */
  insertFollowUp(jobId: number, run: NewRun, now: number): Promise<{ run: RunRecord; created: boolean }>;
  /** Moves a run from `pending` to `sending`; false if another caller already did. */
  claimRun(runId: number, now: number): Promise<boolean>;
  /** Moves a job from one phase to another; false if it was not in `from` (someone else moved it). */
  transitionJob(jobId: number, from: JobPhase, to: JobPhase, now: number): Promise<boolean>;
  getJob(id: number): Promise<JobRecord | undefined>;
  getRun(id: number): Promise<RunRecord | undefined>;
  findJobByThread(channelId: string, threadTs: string): Promise<JobRecord | undefined>;
  getRuns(jobId: number): Promise<RunRecord[]>;
  /**
   * Applies several changes in one transaction (one commit for many small writes); each result
   * as {@link Store.apply}'s.
   */
  applyAll(changes: Change[], now: number): Promise<boolean[]>;
  /** Applies the change atomically; false (and nothing written) when `expect` did not hold. */
  apply(change: Change, now: number): Promise<boolean>;
  /** Active jobs whose next poll is due and that nobody is polling, soonest first (next-poll index). */
  dueJobs(now: number, limit: number): Promise<JobRecord[]>;
  /**
   * Claims up to `limit` of {@link Store.dueJobs} for `instanceId` until `until` (epoch ms), so no
   * other instance polls them meanwhile; concurrent claimers never get the same job.
   */
  claimDueJobs(instanceId: string, now: number, limit: number, until: number): Promise<JobRecord[]>;
  /** When the next unclaimed active job falls due (epoch ms), if any. */
  nextDueAt(now: number): Promise<number | undefined>;
  /** Ends `instanceId`'s poll claim on a job (a no-op if the claim is not, or no longer, its own). */
  releaseJob(jobId: number, instanceId: string): Promise<void>;
  /** Records that an instance is alive at `now`; registers it the first time. */
  heartbeat(instanceId: string, now: number): Promise<void>;
  /** How many instances were heard from since `since` (epoch ms). */
  liveInstances(since: number): Promise<number>;
  /** Forgets an instance that stopped cleanly and releases its claims, so others take over at once. */
  retireInstance(instanceId: string): Promise<void>;
  /**
   * Takes over what instances not heard from since `staleBefore` left behind (and half-done work
   * with no owner): releases their poll and delivery claims, makes their half-done jobs and
   * follow-ups `instanceId`'s, and returns those for recovery. Concurrent callers never take the
   * same row. `instanceId` itself always counts as alive.
   */
  adoptOrphans(instanceId: string, staleBefore: number): Promise<Orphans>;
  /**
   * Gives back work `instanceId` holds but has no room to carry on now: those of the jobs still
   * to be started (`accepted`, `posting`, `creating`) and follow-ups still to be sent
   * (`pending`, `ready`, `sending`) that it owns lose their owner, so the next
   * {@link Store.adoptOrphans} round, of any instance, takes them. Others are left as they are.
   */
  releaseWork(instanceId: string, work: { jobIds: number[]; runIds: number[] }): Promise<void>;
  /** Follow-ups recorded while the job did not yet exist upstream. */
  pendingRuns(jobId: number): Promise<RunRecord[]>;
  /** Checked follow-ups of a job waiting to be sent, oldest first. */
  readyRuns(jobId: number): Promise<RunRecord[]>;
  /**
   * Moves every `ready` follow-up of a job to `sending` and returns them, oldest first: one batch.
   * Concurrent callers never get the same run.
   */
  claimReadyRuns(jobId: number, instanceId: string, now: number): Promise<RunRecord[]>;
  /** A person's (`requesterId`) or a channel's most recent jobs, newest first. */
  recentJobs(filter: { requesterId: string } | { channelId: string }, limit: number): Promise<JobRecord[]>;
  /**
   * Uses of the agent API counted since `since`, per project (null: the default project): runs
   * reserved with {@link Store.reserveUse} that did not end `failed`, replies sent together as
   * one. What counts against the agent API's hourly limit.
   */
  instructionsSince(since: number): Promise<{ projectId: string | null; count: number }[]>;
  /** Records the status emoji on the thread's root without touching the job's change time. */
  setRootReaction(jobId: number, name: string | null): Promise<void>;
  /** Id of the job's newest undelivered status card update, if any. */
  latestCardUpdate(jobId: number): Promise<number | undefined>;
  /**
   * Marks the job's undelivered card updates up to `uptoId` delivered at `now` (one update that
   * rendered the job after they were queued covers them), except those another instance holds.
   */
  supersedeCardUpdates(jobId: number, uptoId: number, instanceId: string, now: number): Promise<void>;
  /** Remembers that a person opened the App Home, so their jobs' changes refresh it. */
  recordHomeOpened(userId: string, teamId: string | null, now: number): Promise<void>;
  homeOpened(userId: string): Promise<boolean>;
  enqueue(items: NewOutboxItem[], now: number): Promise<void>;
  /**
   * Undelivered outbox items that are due and not claimed, oldest first. Thread posts of one job
   * come out one at a time, in order; root updates, reactions and private replies are independent.
   */
  dueOutbox(now: number, limit: number): Promise<OutboxItem[]>;
  /**
   * Claims up to `limit` of {@link Store.dueOutbox} for `instanceId` until `until` (epoch ms), and
   * starts an attempt on each: `attempts` counts it and `startedAt` is `now`.
   */
  claimOutbox(instanceId: string, now: number, limit: number, until: number): Promise<OutboxItem[]>;
  updateOutbox(id: number, patch: OutboxPatch): Promise<void>;
  /**
   * Earliest time an undelivered item not held back behind another can be taken: its next attempt,
   * or the end of another instance's claim on it. Undefined when there is none.
   */
  nextOutboxAt(): Promise<number | undefined>;
  countActiveJobs(): Promise<number>;
  /**
   * The deployment-wide figures the metrics endpoint shows: agent API uses since `usesSince`,
   * active jobs and the most overdue poll, the outbox backlog and its oldest item, and instances
   * heard from since `liveSince` (epoch ms). Read-only; served by the partial indexes on due jobs,
   * undelivered outbox items and reserved runs, so its cost follows the work in flight, not the
   * size of the history.
   */
  figures(usesSince: number, liveSince: number): Promise<StoreFigures>;
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
   * Project uses count as {@link Store.instructionsSince} does: replies sent together are one.
   */
  reserveUse(runId: number, quota: UseQuota, now: number): Promise<UseReservation>;
  /**
   * Retention: for jobs finished (idle, not started, start unknown or gone; no run open, nothing
   * left to deliver) and unchanged since before `before`, replaces the instruction with
   * `erasedInstruction`, empties every run's prompt (which carries thread context and follow-up
   * texts) and forgets the response_url. The job row, its thread and its ids stay, so a reply in
   * an old thread still finds its job. Also deletes outbox items delivered or abandoned before
   * `before`, and App Home visits older than that. Handles at most `limit` jobs and `limit`
   * outbox items per call; call again while it reports that many.
   */
  eraseExpired(before: number, erasedInstruction: string, now: number, limit: number): Promise<Erased>;
  close(): Promise<void>;
}
