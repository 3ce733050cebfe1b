import type { JobPatch, JobRecord, JobsStore, NewJob, RunOutcome } from '../../src/store/types.js';

/** A job record as the renderers get it: a command's job, its thread and card known; `fields` override. */
export const jobRecord = (fields: Partial<JobRecord> = {}): JobRecord => ({
  id: 1,
  teamId: 'T0TEST',
  channelId: 'C0DOCS',
  threadTs: '1700000000.000100',
  cardTs: '1700000000.000100',
  origin: 'command',
  projectId: null,
  privacy: 'public',
  contextChannelId: null,
  contextTs: null,
  rootReaction: null,
  sessionStatus: null,
  requesterId: 'U0ALICE',
  instruction: 'Add a quickstart',
  triggerKey: 'command:t1',
  responseUrl: null,
  agentJobId: 'job_1',
  phase: 'active',
  agentStatus: null,
  prLink: null,
  lastOutcome: null,
  repository: null,
  ref: null,
  model: null,
  runCount: 1,
  nextPollAt: null,
  pollIntervalMs: 10_000,
  pollFailures: 0,
  pollRefusals: 0,
  runStartedAt: null,
  lastError: null,
  owner: null,
  ownerUntil: null,
  claimedBy: null,
  claimedUntil: null,
  erasedAt: null,
  stoppedRun: null,
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_000_000,
  ...fields,
});

/**
 * A job started by a mention: its thread's root is the person's message, its card the bot's reply
 * there, so the root carries the status emoji (a command's card is its root and carries none).
 */
export const MENTION_THREAD = {
  origin: 'mention',
  threadTs: '1700000000.000100',
  cardTs: '1700000000.000200',
} as const satisfies Partial<JobRecord>;

let triggers = 0;

/**
 * Records a job as a command would, with the sample values of {@link jobRecord} (`fields`
 * override), its first run carrying `prompt` (the instruction unless given) by the requester.
 */
export function insertSampleJob(
  store: Pick<JobsStore, 'insertJob'>,
  at: number,
  fields: Partial<NewJob> = {},
  prompt = fields.instruction ?? 'Add a quickstart',
) {
  const requesterId = fields.requesterId ?? 'U0ALICE';
  return store.insertJob(
    {
      teamId: 'T0TEST',
      channelId: 'C0DOCS',
      requesterId,
      instruction: prompt,
      triggerKey: `command:sample-${++triggers}`,
      responseUrl: null,
      pollIntervalMs: 1_000,
      ...fields,
    },
    { kind: 'create', prompt, authorId: requesterId, messageTs: null, owner: fields.owner },
    at,
  );
}

/**
 * Records a job whose first run the agent answered with `outcome` at `at` (see
 * {@link insertSampleJob}): idle, its thread and card at `threadTs`, changed by `patch`.
 */
export async function insertFinishedJob(
  store: Pick<JobsStore, 'insertJob' | 'apply'>,
  at: number,
  finished: { outcome: RunOutcome; threadTs: string; job?: Partial<NewJob>; patch?: JobPatch },
) {
  const { job, run } = await insertSampleJob(store, at, finished.job);
  const { outcome, threadTs } = finished;
  await store.apply(
    {
      jobId: job.id,
      job: { phase: 'idle', threadTs, cardTs: threadTs, lastOutcome: outcome, ...finished.patch },
      run: { id: run.id, patch: { state: 'sent', sentAt: at, outcome, outcomeAt: at } },
      incrementRunCount: true,
    },
    at,
  );
  return { job, run };
}
