import { type JobPhase, sqlList, THREAD_RELEASING_PHASES } from '../domain/phases.js';
import { insertJob, insertRun } from './inserts.js';
import { enqueueAll } from './outbox.js';
import type { Change, JobRecord, NewFollowUp, NewJob, NewRun, RunRecord, RunState } from './records.js';
import { parseAt, parseCount, parseJob, parseJobState, parseRun, parseThread } from './rows.js';
import { type Engine, type Operation, tx } from './statements.js';

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

/*
 * Jobs and their runs: their statements, one text for SQLite and PostgreSQL with `:name`
 * parameters (see `queries.ts`), the changes to them applied in one transaction each, and their
 * methods.
 */

// The phase set the thread's release filters on, written once with the job's phases.
const RELEASING = sqlList(THREAD_RELEASING_PHASES);

const JOBS = {
  /** A repeated trigger key returns no row: the start was recorded before. */
  insertJob: `
    INSERT INTO jobs (team_id, channel_id, requester_id, instruction, trigger_key, response_url, phase,
      poll_interval_ms, owner, origin, project_id, thread_ts, context_ts, privacy, context_channel_id,
      created_at, updated_at)
    VALUES (:teamId, :channelId, :requesterId, :instruction, :triggerKey, :responseUrl, 'accepted',
      :pollIntervalMs, :owner, :origin, :projectId, :threadTs, :contextTs, :privacy, :contextChannelId,
      :now, :now)
    ON CONFLICT (trigger_key) DO NOTHING
    RETURNING id`,
  jobById: 'SELECT * FROM jobs WHERE id = :jobId',
  jobByTrigger: 'SELECT * FROM jobs WHERE trigger_key = :triggerKey',
  jobByThread: 'SELECT * FROM jobs WHERE channel_id = :channelId AND thread_ts = :threadTs',
  /** What `Change.expect` is checked against; on PostgreSQL the row stays locked until commit. */
  jobState: 'SELECT phase, run_count, owner FROM jobs WHERE id = :jobId {{forUpdate}}',
  transitionJob: 'UPDATE jobs SET phase = :to, updated_at = :now WHERE id = :jobId AND phase = :from',
  incrementRunCount: 'UPDATE jobs SET run_count = run_count + 1 WHERE id = :jobId',
  countActiveJobs: "SELECT COUNT(*) AS n FROM jobs WHERE phase = 'active'",
  /** A job that never ran, or that the agent API forgot, gives its thread up to a new job. */
  /** The same start seen again (its own trigger key) keeps its own thread. */
  detachThread: `
    UPDATE jobs SET thread_ts = NULL
    WHERE id = :jobId AND phase IN (${RELEASING}) AND trigger_key <> :triggerKey`,
  /** A job that replaces another in its thread takes over the emoji the other put on the root. */
  inheritRootReaction: `
    UPDATE jobs SET root_reaction = (SELECT root_reaction FROM jobs WHERE id = :replacedId)
    WHERE id = :jobId`,
  recentJobsOfRequester:
    'SELECT * FROM jobs WHERE requester_id = :requesterId ORDER BY created_at DESC, id DESC LIMIT :limit',
  recentJobsOfChannel:
    'SELECT * FROM jobs WHERE channel_id = :channelId ORDER BY created_at DESC, id DESC LIMIT :limit',
  setRootReaction: 'UPDATE jobs SET root_reaction = :name WHERE id = :jobId',
  setSessionStatus: 'UPDATE jobs SET session_status = :status WHERE id = :jobId',
} as const;

const RUNS = {
  /**
   * The next number of the job's runs, in the same statement. Numbering is serialised per job:
   * SQLite has one writer, PostgreSQL first takes `lockJobPostgres`.
   */
  insertRun: `
    INSERT INTO runs (job_id, seq, kind, prompt, author_id, run_key, message_ts, state, owner, team_id,
      created_at)
    VALUES (:jobId, (SELECT COALESCE(MAX(seq), 0) + 1 FROM runs WHERE job_id = :jobId), :kind, :prompt,
      :authorId, :runKey, :messageTs, 'pending', :owner, :teamId, :now)
    RETURNING id, seq`,
  runById: 'SELECT * FROM runs WHERE id = :runId',
  /** What `Change.expectRun` is checked against; on PostgreSQL the row stays locked until commit. */
  lockedRun: 'SELECT * FROM runs WHERE id = :runId {{forUpdate}}',
  /**
   * Served by `runs_key`. A run recorded before runs had keys has none stored: its message's ts
   * is its key, read here as the index reads it.
   */
  runByKey: 'SELECT * FROM runs WHERE job_id = :jobId AND COALESCE(run_key, message_ts) = :runKey',
  runsOfJob: 'SELECT * FROM runs WHERE job_id = :jobId ORDER BY seq',
  /** Served by `runs_open`: its cost follows the instructions in flight, not the history. */
  threadOfOpenMessage: `
    SELECT j.thread_ts AS thread_ts FROM runs r JOIN jobs j ON j.id = r.job_id
    WHERE r.state IN ('pending', 'ready', 'sending') AND r.message_ts = :messageTs
      AND j.channel_id = :channelId AND j.thread_ts IS NOT NULL
    LIMIT 1`,
  firstRunOfJob: 'SELECT * FROM runs WHERE job_id = :jobId ORDER BY seq LIMIT 1',
  pendingRuns:
    "SELECT * FROM runs WHERE state = 'pending' AND job_id = :jobId AND kind = 'follow_up' ORDER BY seq",
  readyRuns:
    "SELECT * FROM runs WHERE state = 'ready' AND job_id = :jobId AND kind = 'follow_up' ORDER BY seq",
  /** A run sent counts as a use even if it somehow was never reserved. */
  claimRun: `
    UPDATE runs SET state = 'sending', sent_at = :now, reserved_at = COALESCE(reserved_at, :now)
    WHERE id = :runId AND state = 'pending'`,
} as const;

export const JOB_QUERIES = { ...JOBS, ...RUNS } as const;

/** What a change's expectations are checked against of its job. */
type JobState = { phase: string; runCount: number; owner: string | null };

/**
 * Whether a change's expectations hold, given the job's phase, run count and owner, the expected
 * run's state, and the owners of the runs it names in `owner`, as read in the change's
 * transaction (undefined: not read, or no such row).
 */
export function changeHolds(
  change: Change,
  job: JobState | undefined,
  run: { state: RunState } | undefined,
  runOwners: readonly (string | null | undefined)[] = [],
): boolean {
  const { expect, expectRun, owner } = change;
  if (expect && (job?.phase !== expect.phase || job.runCount !== expect.runCount)) return false;
  if (owner?.job && job?.owner !== owner.instanceId) return false;
  if (owner && runOwners.some((o) => o !== owner.instanceId)) return false;
  return !expectRun || (run !== undefined && expectRun.states.includes(run.state));
}

/** Whether the change must read the job's row before it applies. */
export const readsJob = (change: Change): boolean =>
  change.expect !== undefined || change.owner?.job === true;

/** One change in the caller's transaction; false (nothing written) when its expectations did not hold. */
export function* applyChange(change: Change, now: number): Operation<boolean> {
  const { jobId } = change;
  let job: JobState | undefined;
  if (readsJob(change)) job = yield* tx.one('jobState', { jobId }, parseJobState);
  // Locked on PostgreSQL even when not read, so the changes to one job apply one at a time.
  else yield* tx.lock('lockJobPostgres', { jobId });
  const run = change.expectRun
    ? yield* tx.one('lockedRun', { runId: change.expectRun.id }, parseRun)
    : undefined;
  const owners: (string | null | undefined)[] = [];
  for (const runId of change.owner?.runIds ?? [])
    owners.push((yield* tx.one('lockedRun', { runId }, parseRun))?.owner);
  if (!changeHolds(change, job, run, owners)) return false;
  yield* tx.update('jobs', jobId, { ...change.job, updatedAt: now });
  if (change.incrementRunCount) yield* tx.write('incrementRunCount', { jobId });
  for (const { id, patch } of [...(change.run ? [change.run] : []), ...(change.runs ?? [])])
    yield* tx.update('runs', id, patch);
  if (change.enqueue) yield* enqueueAll(change.enqueue, now);
  return true;
}

/** Several changes in one transaction, in order, each as {@link applyChange}. */
export function* applyChanges(changes: Change[], now: number): Operation<boolean[]> {
  const results: boolean[] = [];
  for (const change of changes) results.push(yield* applyChange(change, now));
  return results;
}

/**
 * Jobs and their runs, written once for both engines over their {@link Engine}: the reads and
 * moves of one statement each, and the inserts and changes in one transaction each.
 */
export function jobMethods(engine: Engine): JobsStore & RunsStore {
  return {
    insertJob: (job, firstRun, now) => engine.transaction(insertJob(job, firstRun, now)),
    transitionJob: async (jobId, from, to, now) =>
      (await engine.write('transitionJob', { jobId, from, to, now })) === 1,
    getJob: async (jobId) => engine.one('jobById', { jobId }, parseJob),
    findJobByThread: async (channelId, threadTs) =>
      engine.one('jobByThread', { channelId, threadTs }, parseJob),
    threadOfOpenMessage: async (channelId, messageTs) =>
      (await engine.one('threadOfOpenMessage', { channelId, messageTs }, parseThread))?.threadTs,
    apply: (change, now) => engine.transaction(applyChange(change, now)),
    applyAll: (changes, now) => engine.transaction(applyChanges(changes, now)),
    dueJobs: async (now, limit) => engine.many('dueJobs', { now, limit }, parseJob),
    nextDueAt: async (now) => (await engine.one('nextDueAt', { now }, parseAt))?.at ?? undefined,
    recentJobs: async (filter, limit) =>
      'requesterId' in filter
        ? engine.many('recentJobsOfRequester', { requesterId: filter.requesterId, limit }, parseJob)
        : engine.many('recentJobsOfChannel', { channelId: filter.channelId, limit }, parseJob),
    async setRootReaction(jobId, name) {
      await engine.write('setRootReaction', { jobId, name });
    },
    async setSessionStatus(jobId, status) {
      await engine.write('setSessionStatus', { jobId, status });
    },
    countActiveJobs: async () => (await engine.one('countActiveJobs', {}, parseCount))?.n ?? 0,
    insertFollowUp: (jobId, run, now) => engine.transaction(insertRun(jobId, run, now)),
    claimRun: async (runId, now) => (await engine.write('claimRun', { runId, now })) === 1,
    getRun: async (runId) => engine.one('runById', { runId }, parseRun),
    getRuns: async (jobId) => engine.many('runsOfJob', { jobId }, parseRun),
    pendingRuns: async (jobId) => engine.many('pendingRuns', { jobId }, parseRun),
    readyRuns: async (jobId) => engine.many('readyRuns', { jobId }, parseRun),
  };
}
