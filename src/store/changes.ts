/** What callers ask the store to change: patches of records, grouped into one atomic change. */

import type { JobPhase } from '../domain/phases.js';
import { enqueueAll } from './outbox.js';
import type { JobRecord, NewOutboxItem, OutboxItem, RunRecord, RunState } from './records.js';
import { parseJobState, parseRun } from './rows.js';
import { type Operation, tx } from './statements.js';

export type JobPatch = Partial<Omit<JobRecord, 'id' | 'createdAt' | 'teamId' | 'triggerKey' | 'owner'>>;
export type RunPatch = Partial<
  Pick<RunRecord, 'state' | 'error' | 'outcome' | 'sentAt' | 'outcomeAt' | 'prompt'>
>;

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
  /**
   * Apply only if this run is still in one of these states: an edit of a reply waiting in its
   * batch must not change (or withdraw) one that a batch has meanwhile taken to send.
   */
  expectRun?: { id: number; states: readonly RunState[] };
  /**
   * Apply only while `instanceId` still owns the job (`job`) and each of `runIds`: what an
   * instance learnt in a call it made for work that was meanwhile taken over is not written.
   */
  owner?: { instanceId: string; job?: boolean; runIds?: readonly number[] };
}

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
