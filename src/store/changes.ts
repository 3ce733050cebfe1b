/** What callers ask the store to change: patches of records, grouped into one atomic change. */

import type { JobPhase } from '../domain/phases.js';
import type { JobRecord, NewOutboxItem, OutboxItem, RunRecord } from './records.js';

export type JobPatch = Partial<Omit<JobRecord, 'id' | 'createdAt' | 'teamId' | 'triggerKey' | 'owner'>>;
export type RunPatch = Partial<Pick<RunRecord, 'state' | 'error' | 'outcome' | 'sentAt' | 'outcomeAt'>>;

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
