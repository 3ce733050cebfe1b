import { implicitRunKey } from '../domain/keys.js';
import { enqueueAll } from './outbox.js';
import type { JobRecord, NewJob, NewRun, RunRecord } from './records.js';
import { parseId, parseJob, parseRun, parseRunNumber } from './rows.js';
import { type Operation, tx } from './statements.js';

/** The arguments of the `insertJob` statement, by name. */
export const newJobParams = (job: NewJob, now: number) => ({
  teamId: job.teamId,
  channelId: job.channelId,
  requesterId: job.requesterId,
  instruction: job.instruction,
  triggerKey: job.triggerKey,
  responseUrl: job.responseUrl,
  pollIntervalMs: job.pollIntervalMs,
  owner: job.owner ?? null,
  origin: job.origin ?? 'command',
  projectId: job.projectId ?? null,
  threadTs: job.threadTs ?? null,
  contextTs: job.contextTs ?? null,
  // A job recorded without saying where it was asked is treated as private (fail closed).
  privacy: job.privacy ?? 'unknown',
  contextChannelId: job.contextChannelId ?? null,
  now,
});
export type NewJobParams = ReturnType<typeof newJobParams>;

/** The arguments of the `insertRun` statement, by name. */
export const newRunParams = (jobId: number, run: NewRun, now: number) => ({
  jobId,
  kind: run.kind,
  prompt: run.prompt,
  authorId: run.authorId,
  runKey: run.runKey ?? implicitRunKey(run.messageTs),
  messageTs: run.messageTs,
  owner: run.owner ?? null,
  teamId: run.teamId ?? null,
  now,
});
export type NewRunParams = ReturnType<typeof newRunParams>;

/**
 * The job row `insertJob` has just written, built from what it wrote and the columns' starting
 * values rather than read back: every command records one before it is acknowledged, and
 * returning and checking all the row's columns cost about as much as writing them. The store
 * contract holds it equal to the row read back (`test/store/store-contract.ts`). Its strings are
 * the ones sent: the database keeps any well-formed text as it is, but a driver writes an
 * unpaired UTF-16 surrogate as U+FFFD, so code that shows a job's text reads the job.
 */
export const insertedJob = (p: NewJobParams, id: number): JobRecord => ({
  id,
  teamId: p.teamId,
  channelId: p.channelId,
  threadTs: p.threadTs,
  cardTs: null,
  origin: p.origin,
  projectId: p.projectId,
  privacy: p.privacy,
  contextChannelId: p.contextChannelId,
  contextTs: p.contextTs,
  rootReaction: null,
  sessionStatus: null,
  requesterId: p.requesterId,
  instruction: p.instruction,
  triggerKey: p.triggerKey,
  responseUrl: p.responseUrl,
  agentJobId: null,
  phase: 'accepted',
  agentStatus: null,
  prLink: null,
  lastOutcome: null,
  repository: null,
  ref: null,
  model: null,
  runCount: 0,
  nextPollAt: null,
  pollIntervalMs: p.pollIntervalMs,
  pollFailures: 0,
  pollRefusals: 0,
  runStartedAt: null,
  lastError: null,
  owner: p.owner,
  ownerUntil: null,
  claimedBy: null,
  claimedUntil: null,
  erasedAt: null,
  stoppedRun: null,
  createdAt: p.now,
  updatedAt: p.now,
});

/** The run row `insertRun` has just written, built the same way as {@link insertedJob}. */
export const insertedRun = (p: NewRunParams, { id, seq }: { id: number; seq: number }): RunRecord => ({
  id,
  jobId: p.jobId,
  seq,
  kind: p.kind,
  prompt: p.prompt,
  authorId: p.authorId,
  runKey: p.runKey,
  messageTs: p.messageTs,
  state: 'pending',
  error: null,
  outcome: null,
  owner: p.owner,
  ownerUntil: null,
  teamId: p.teamId,
  createdAt: p.now,
  reservedAt: null,
  sentAt: null,
  outcomeAt: null,
});

/** What recording a job answers: the job and its first run, and whether they are new. */
type Recorded = { job: JobRecord; run: RunRecord; created: boolean };

/**
 * Records a run of a job, with the rules of `RunsStore.insertFollowUp`: the same source twice
 * (the same run key) is the run recorded the first time.
 */
export function* insertRun(
  jobId: number,
  run: NewRun,
  now: number,
): Operation<{ run: RunRecord; created: boolean }> {
  yield* tx.lock('lockJobPostgres', { jobId });
  const params = newRunParams(jobId, run, now);
  // A first run (`create`) is recorded with its job, in one transaction: none can precede it.
  const existing =
    run.kind === 'follow_up'
      ? yield* tx.one('runByKey', { jobId, runKey: params.runKey }, parseRun)
      : undefined;
  if (existing) return { run: existing, created: false };
  const inserted = yield* tx.one('insertRun', params, parseRunNumber);
  if (!inserted) throw new Error(`run of job ${jobId} not recorded`);
  return { run: insertedRun(params, inserted), created: true };
}

/** A job recorded before (or in the way), with its first run. */
function* found(existing: JobRecord | undefined, triggerKey: string): Operation<Recorded> {
  if (!existing) throw new Error(`job ${triggerKey} neither inserted nor found`);
  const run = yield* tx.one('firstRunOfJob', { jobId: existing.id }, parseRun);
  if (!run) throw new Error(`job ${existing.id} has no first run`);
  return { job: existing, run, created: false };
}

/** Records a job and its first run, with the rules of `JobsStore.insertJob`. */
export function* insertJob(job: NewJob, firstRun: NewRun, now: number): Operation<Recorded> {
  const { replaces, triggerKey } = job;
  // A retry moves the job it replaces out of its thread's way first: only one retry gets to (on
  // PostgreSQL a concurrent one waits for the row, then finds it moved, and the retry recorded).
  if (replaces) {
    const { jobId, from, to } = replaces;
    if ((yield* tx.write('transitionJob', { jobId, from, to, now })) === 0) {
      const retry = yield* tx.one('jobByTrigger', { triggerKey }, parseJob);
      return yield* found(retry ?? (yield* tx.one('jobById', { jobId }, parseJob)), triggerKey);
    }
  }
  // A thread holds one job: a second start in it returns the job already there.
  const { channelId, threadTs } = job;
  let inThread = threadTs ? yield* tx.one('jobByThread', { channelId, threadTs }, parseJob) : undefined;
  if (inThread && (yield* tx.write('detachThread', { jobId: inThread.id, triggerKey })) === 1)
    inThread = undefined;
  const params = newJobParams(job, now);
  const id = inThread ? undefined : (yield* tx.one('insertJob', params, parseId))?.id;
  const inserted = id === undefined ? undefined : insertedJob(params, id);
  if (!inserted)
    return yield* found(inThread ?? (yield* tx.one('jobByTrigger', { triggerKey }, parseJob)), triggerKey);
  const { run } = yield* insertRun(inserted.id, firstRun, now);
  if (!replaces) return { job: inserted, run, created: true };
  yield* tx.write('inheritRootReaction', { jobId: inserted.id, replacedId: replaces.jobId });
  yield* enqueueAll(replaces.enqueue, now);
  const current = yield* tx.one('jobById', { jobId: inserted.id }, parseJob);
  return { job: current ?? inserted, run, created: true };
}
