import { enterPhase, FIRST_PHASE } from '../domain/phases.js';
import type { Change, JobRecord, NewOutboxItem, RunRecord, RunState } from '../store/types.js';
import type { JobContext } from './job-context.js';

/**
 * Taking back instructions that have not reached the agent: one, for its author's edit or
 * deletion; or everything of a job at once, for a stop.
 */
export interface WaitingWithdrawal {
  /**
   * Takes one waiting instruction back (`note`, if any, queued in the same write): a job's first
   * one means the job never starts, and replies that waited for it are told there is none. False
   * when a batch or the job's start took it meanwhile.
   */
  withdrawInstruction(job: JobRecord, run: RunRecord, note?: NewOutboxItem): Promise<boolean>;
  /**
   * Withdraws every instruction of the job still waiting (as a deletion would: a reply in its
   * batch window or held, a first instruction whose job has not started); returns those taken
   * back. One that a batch or the job's start took meanwhile is left to go on.
   */
  withdrawWaiting(job: JobRecord): Promise<RunRecord[]>;
}

/**
 * The states in which the instruction has not gone out: a reply waiting for its checks or its
 * batch; a job's first instruction while the job is only recorded (its create call not made).
 */
const waitingStates = (run: RunRecord): readonly RunState[] =>
  run.kind === 'create' ? ['pending'] : ['pending', 'ready'];

/** Whether the instruction has not gone out, so it may still be revised or taken back. */
export const isWaiting = (job: JobRecord, run: RunRecord): boolean =>
  waitingStates(run).includes(run.state) && (run.kind !== 'create' || job.phase === FIRST_PHASE);

/**
 * The expectations of a change to a waiting instruction: it applies only while the instruction
 * still waits, so a batch (or the job's start) that took it meanwhile wins.
 */
export const stillWaiting = (
  job: JobRecord,
  run: RunRecord,
): Pick<Change, 'jobId' | 'expect' | 'expectRun'> => ({
  jobId: job.id,
  expectRun: { id: run.id, states: waitingStates(run) },
  // A first instruction: only while its job is as it was read, only recorded (see isWaiting).
  ...(run.kind === 'create' ? { expect: { phase: job.phase, runCount: job.runCount } } : {}),
});

export function createWithdrawal(
  ctx: Pick<JobContext, 'store' | 'logger' | 'now' | 'applyQueued'>,
  /** Tells replies that waited for a job which will now never start that there is none. */
  dispatchReady: (jobId: number) => Promise<void>,
): WaitingWithdrawal {
  const { store, logger, now } = ctx;

  async function withdrawInstruction(job: JobRecord, run: RunRecord, note?: NewOutboxItem): Promise<boolean> {
    const withdrawn = await ctx.applyQueued(
      {
        ...stillWaiting(job, run),
        ...(run.kind === 'create'
          ? { job: { ...enterPhase('accepted', 'not_started'), lastError: 'withdrawn' } }
          : {}),
        run: { id: run.id, patch: { state: 'failed', error: 'withdrawn' } },
        enqueue: note ? [note] : [],
      },
      now(),
    );
    if (withdrawn) logger.info('instruction withdrawn', { jobId: job.id, runId: run.id });
    // Replies that waited for this job to start are told there is none.
    if (withdrawn && run.kind === 'create') await dispatchReady(job.id);
    return withdrawn;
  }

  async function withdrawWaiting(job: JobRecord): Promise<RunRecord[]> {
    const taken: RunRecord[] = [];
    for (const run of await store.getRuns(job.id))
      if (isWaiting(job, run) && (await withdrawInstruction(job, run))) taken.push(run);
    return taken;
  }

  return { withdrawInstruction, withdrawWaiting };
}
