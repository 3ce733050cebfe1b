import type { AgentJob } from '../agent/schema.js';
import type { JobRecord, Orphans, RunOutcome } from '../store/types.js';
import { createReplyCatchUp } from './catch-up.js';
import { createFollowUps } from './follow-ups.js';
import { createHolds } from './holds.js';
import { createInstructionChecks } from './instruction-checks.js';
import { createJobContext, type JobServiceDeps } from './job-context.js';
import { createRunOutcomes } from './outcomes.js';
import { createRecovery } from './recovery.js';
import { createReplies } from './replies.js';
import type {
  MentionOutcome,
  MentionRequest,
  ReplyRequest,
  ShortcutRequest,
  StartRequest,
} from './requests.js';
import { createJobAcceptance } from './start/accept.js';
import { createJobStart } from './start/start-job.js';

export { outcomeOf } from './agent-outcomes.js';
export type { JobServiceDeps } from './job-context.js';
export type {
  MentionOutcome,
  MentionRequest,
  ReplyRequest,
  ShortcutRequest,
  StartRequest,
} from './requests.js';

/**
 * The job rules. Every instruction is first *accepted* (recorded in the store, fast, before
 * Slack is acknowledged), then *processed* in the background; a crash in between leaves a row
 * that {@link JobService.recover} picks up.
 */
export interface JobService {
  /** Records a command. Returns the new job's id, or undefined when it is a repeat. */
  acceptCommand(request: StartRequest): Promise<number | undefined>;
  /**
   * Records a mention: a new job in its thread, or, where the thread already has a job, a
   * follow-up to it. Undefined when it is a repeat.
   */
  acceptMention(request: MentionRequest): Promise<MentionOutcome>;
  /**
   * Records a shortcut submission: the new job's id; `repeat` for the same submission again;
   * `thread_taken` when the message's thread already has a job (nothing recorded).
   */
  acceptShortcut(request: ShortcutRequest): Promise<{ job: number } | 'repeat' | 'thread_taken'>;
  /** Checks access, posts the root message and creates the job upstream. */
  startJob(jobId: number): Promise<void>;
  /** Records a reply in a job's thread. Returns the run's id, or undefined (no job, or a repeat). */
  acceptReply(request: ReplyRequest): Promise<number | undefined>;
  /** Checks access and sends a recorded reply to the agent (or explains why not). */
  processReply(runId: number, teamId?: string): Promise<void>;
  /**
   * Records the terminal outcome of the job's open runs and queues its post. `job` is the
   * snapshot the outcome was observed against; false when the job has moved on since.
   */
  finishRun(job: JobRecord, outcome: RunOutcome, agentJob?: AgentJob): Promise<boolean>;
  /** Tells the thread, once per run, that polling is refused (the admin key). */
  notePollRefused(job: JobRecord): Promise<void>;
  /**
   * Finishes or explains what a stopped process left half done (taken over with
   * {@link Store.adoptOrphans}).
   */
  recover(orphans: Orphans): Promise<void>;
  /**
   * Leaves recorded work this instance has no background slot for to the store: the jobs still
   * to start and the follow-ups still to send lose their owner, and the next take-over round
   * (this instance's or another's, see {@link Store.adoptOrphans}) carries them on. Never
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
 * calls): replies, then starting a job, then accepting one, the outcomes and recovery.
 */
export function createJobService(deps: JobServiceDeps): JobService {
  const ctx = createJobContext(deps);
  const { store, logger } = ctx;
  const followUps = createFollowUps(ctx);
  const holds = createHolds({
    ...ctx,
    ...(deps.holdRetryMs !== undefined ? { firstRetryMs: deps.holdRetryMs } : {}),
  });
  const checks = createInstructionChecks(ctx, holds);
  const replies = createReplies(ctx, { checks, followUps });
  const catchUp = createReplyCatchUp({ ...ctx, accept: replies.acceptReply, process: replies.processReply });
  const start = createJobStart(ctx, { checks, dispatchReady: followUps.dispatchReady, catchUp });
  const recovery = createRecovery(ctx, { ...start, ...replies, dispatchReady: followUps.dispatchReady });

  return {
    ...createJobAcceptance(ctx, replies.acceptReply),
    startJob: start.startJob,
    ...replies,
    ...createRunOutcomes(ctx),
    recover: recovery.recover,

    async handBack({ jobIds = [], runIds = [] }) {
      if (jobIds.length === 0 && runIds.length === 0) return;
      try {
        await store.releaseWork(ctx.instanceId, { jobIds, runIds });
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
      holds.stop();
    },
  };
}
