import type { Orphans } from '../store/types.js';
import type { TaskTracker } from '../util/tasks.js';
import { createFollowUps } from './follow-ups.js';
import { createInstructionChecks, createVerificationWaits } from './instruction-checks.js';
import { createJobContext, type JobServiceDeps } from './job-context.js';
import { createRecovery } from './recovery.js';
import { createReplies, createReplyCatchUp, type Replies } from './replies.js';
import type { MentionOutcome } from './requests.js';
import { createJobRecording, type JobRecording } from './start/accept.js';
import { createRetryAcceptance, type RetryAcceptance } from './start/retry.js';
import { createJobStart, type JobStart } from './start/start-job.js';
import { createWithdrawal, type WaitingWithdrawal } from './withdrawal.js';

/**
 * The life of a job, whatever started it. Every instruction is first *accepted* (recorded in the
 * store, fast, before Slack is acknowledged: a new job through {@link JobRecording.recordJob}, each
 * place one starts from building its own, a follow-up through {@link Replies.acceptFollowUp}), then
 * *processed* in the background; a crash in between leaves a row that {@link JobService.recover}
 * picks up.
 */
export interface JobService
  extends JobRecording,
    RetryAcceptance,
    Pick<JobStart, 'startJob'>,
    Replies,
    WaitingWithdrawal {
  /**
   * Finishes or explains what a stopped process left half done (taken over with
   * {@link ClusterStore.takeOverOrphans}).
   */
  recover(orphans: Orphans): Promise<void>;
  /**
   * Leaves recorded work this instance has no background slot for to the store: the jobs still
   * to start and the follow-ups still to send lose their owner, and the next take-over round
   * (this instance's or another's, see {@link ClusterStore.takeOverOrphans}) carries them on. Never
   * rejects: if the store cannot be written, the work stays this instance's and its next start
   * carries it on.
   */
  handBack(work: { jobIds?: number[]; runIds?: number[] }): Promise<void>;
  /**
   * Stops waiting for batch windows. Replies still waiting stay recorded as `ready`, and the
   * instance that takes over this one's work (or this one's next start) sends them.
   */
  stop(): void;
}

/**
 * Builds the job flows in the order they depend on each other (each is handed the ones it
 * calls): replies, then starting a job, then accepting one, and recovery. A run's outcome is
 * recorded by `createRunOutcomes` (outcomes.ts), built before the poller that reports to it.
 */
export function createJobService(deps: JobServiceDeps): JobService {
  const ctx = createJobContext(deps);
  const { store, logger } = ctx;
  const followUps = createFollowUps(ctx);
  const verification = createVerificationWaits({
    ...ctx,
    ...(deps.verificationRetryMs !== undefined ? { firstRetryMs: deps.verificationRetryMs } : {}),
  });
  const checks = createInstructionChecks(ctx, verification);
  const replies = createReplies(ctx, { checks, followUps });
  const catchUp = createReplyCatchUp({ ...ctx, accept: replies.acceptReply, process: replies.processReply });
  const start = createJobStart(ctx, { checks, dispatchReady: followUps.dispatchReady, catchUp });
  const withdrawal = createWithdrawal(ctx, followUps.dispatchReady);
  const recovery = createRecovery(ctx, { ...start, ...replies, dispatchReady: followUps.dispatchReady });

  return {
    ...createJobRecording(ctx, replies.acceptReply),
    ...createRetryAcceptance(ctx),
    startJob: start.startJob,
    ...replies,
    ...withdrawal,
    recover: recovery.recover,

    async handBack({ jobIds = [], runIds = [] }) {
      if (jobIds.length === 0 && runIds.length === 0) return;
      try {
        await store.handBack(ctx.instanceId, { jobIds, runIds });
        logger.warn('no room for background work: left to the store for the next take-over round', {
          jobs: jobIds,
          runs: runIds,
        });
      } catch (error) {
        logger.error('could not leave work to the store; it is carried on at the next start', {
          jobs: jobIds,
          runs: runIds,
          error,
        });
      }
    },

    stop() {
      followUps.stop();
      verification.stop();
    },
  };
}

/** What handing recorded work on takes: a background slot, else the job service's hand-back. */
export interface RecordedWorkDeps {
  tasks: Pick<TaskTracker, 'run'>;
  jobs: Pick<JobService, 'handBack'>;
}

/**
 * Hands recorded work to the background. When no slot is free it is not queued in memory: the
 * store already holds it, so it is left there for the take-over round, and Slack's answer never
 * waits for a slot.
 */
export function runRecorded(
  deps: RecordedWorkDeps,
  name: string,
  work: () => Promise<void>,
  recorded: { jobId: number } | { runId: number },
): void {
  if (deps.tasks.run(name, work)) return;
  void deps.jobs.handBack('jobId' in recorded ? { jobIds: [recorded.jobId] } : { runIds: [recorded.runId] });
}

/** Carries on what a message (a mention or a direct message) became: a new job, or a follow-up. */
export function carryOnMessage(
  deps: RecordedWorkDeps & { jobs: Pick<JobService, 'startJob' | 'processReply'> },
  outcome: MentionOutcome,
  teamId: string,
) {
  if (outcome && 'job' in outcome)
    runRecorded(deps, 'start job', () => deps.jobs.startJob(outcome.job), { jobId: outcome.job });
  if (outcome && 'reply' in outcome)
    runRecorded(deps, 'forward reply', () => deps.jobs.processReply(outcome.reply, teamId), {
      runId: outcome.reply,
    });
}
