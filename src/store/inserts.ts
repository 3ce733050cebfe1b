import { implicitRunKey } from '../domain/keys.js';
import type { JobRecord, NewJob, NewRun, RunRecord } from './types.js';

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
