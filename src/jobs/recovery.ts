import { text } from '../blocks/messages.js';
import { cardUpdate, privateNote, threadPost } from '../delivery/outbox-items.js';
import { keys } from '../delivery/outbox-registry.js';
import { enterPhase, expectPhase, type JobPhase, moveJob, STILL_STARTING } from '../domain/phases.js';
import type { JobIn, JobRecord, Orphans, RunRecord } from '../store/types.js';
import type { TaskTracker } from '../util/tasks.js';
import { type JobContext, requesterTarget } from './job-context.js';
import type { JobService } from './job-service.js';
import type { JobStart } from './start/start-job.js';
import { stepAnswer } from './workflow-steps.js';

/** The flows recovery carries interrupted work on with. */
export interface RecoveryParts extends JobStart {
  /** Checks and sends a recorded reply (see {@link Replies.processReply}). */
  processReply: (runId: number) => Promise<void>;
  /** Sends (or explains) the follow-ups that waited for a job to be created. */
  dispatchReady: (jobId: number) => Promise<void>;
}

/** The job's state when the stopped process left it: applied only if it is still there. */
type Expect = { phase: JobPhase; runCount: number };

/**
 * Finishes or explains what a stopped process left half done (taken over with
 * {@link ClusterStore.takeOverOrphans}): one step per phase the job was left in, then the replies.
 */
export function createRecovery(
  ctx: Pick<JobContext, 'store' | 'logger' | 'metrics' | 'now' | 'instanceId' | 'loops' | 'applyQueued'>,
  parts: RecoveryParts,
) {
  const { store, logger, metrics, now } = ctx;
  /** What this instance took over stays its own to explain only while no other took it since. */
  const owner = { instanceId: ctx.instanceId, job: true };

  /** Nothing was done for it yet: carry on as if the command had just arrived. */
  async function fromAccepted(job: JobIn<'accepted'>): Promise<void> {
    await parts.startJob(job.id);
    await parts.dispatchReady(job.id);
  }

  /**
   * The create call was surely never made. If Slack has the status card, carry on from it; if
   * it surely does not, start over; if Slack cannot say, tell the requester.
   */
  async function fromPosting(job: JobIn<'posting'>, expect: Expect, first: RunRecord | undefined) {
    const found = await parts.findCard(job);
    if (found?.ts && first) return parts.cardRecorded(job, first, found.ts);
    if (found && first) {
      if (await moveJob(store, job.id, job.phase, 'accepted', now())) await parts.startJob(job.id);
      return;
    }
    metrics.instruction(job.origin, 'failed', 'restart');
    await ctx.applyQueued(
      {
        jobId: job.id,
        expect,
        owner,
        job: {
          ...enterPhase(job.phase, 'not_started'),
          lastError: 'restarted while posting the root message',
        },
        ...(first ? { run: { id: first.id, patch: { state: 'failed' as const, error: 'restarted' } } } : {}),
        enqueue: [
          privateNote(
            job.id,
            keys.restartRefused({ jobId: job.id }),
            requesterTarget(job),
            text.restartedBeforePost(),
          ),
          ...stepAnswer(job, { refused: { reason: 'restarted_before_post' } }),
        ],
      },
      now(),
    );
    await parts.dispatchReady(job.id);
  }

  /** The create call may have reached the agent: nobody can say whether the job started. */
  async function fromCreating(job: JobIn<'creating'>, expect: Expect, first: RunRecord | undefined) {
    const unknown = enterPhase(job.phase, 'start_unknown');
    metrics.instruction(job.origin, 'unknown', 'restart');
    await ctx.applyQueued(
      {
        jobId: job.id,
        expect,
        owner,
        job: { ...unknown, lastError: 'restarted while creating the job' },
        ...(first ? { run: { id: first.id, patch: { state: 'unknown' as const, error: 'restarted' } } } : {}),
        enqueue: [
          threadPost({
            job,
            key: keys.startUnknown({ jobId: job.id }),
            kind: 'notice',
            text: text.restartedBeforeCreate(job.requesterId),
            run: first,
          }),
          ...cardUpdate({ ...job, ...unknown }),
          ...stepAnswer(job, { refused: { reason: 'restarted_before_create' } }),
        ],
      },
      now(),
    );
    // Follow-ups that waited for this job to be created (other instances may hold them).
    await parts.dispatchReady(job.id);
  }

  async function recoverJob(takenOver: JobRecord): Promise<void> {
    // Only jobs still being started are taken over (see ClusterStore.takeOverOrphans).
    const job = { ...takenOver, phase: expectPhase(takenOver.phase, STILL_STARTING) };
    if (job.phase === 'accepted') logger.info('taking over a job still to start', { jobId: job.id });
    else logger.warn('job interrupted: the process starting it stopped', { jobId: job.id, phase: job.phase });
    const expect = { phase: job.phase, runCount: job.runCount };
    const first = (await store.getRuns(job.id))[0];
    if (job.phase === 'accepted') return fromAccepted({ ...job, phase: job.phase });
    if (job.phase === 'posting') return fromPosting({ ...job, phase: job.phase }, expect, first);
    return fromCreating({ ...job, phase: job.phase }, expect, first);
  }

  /** A reply being sent may have reached the agent; one only recorded is safe to process now. */
  async function recoverRun(run: RunRecord): Promise<void> {
    const job = await store.getJob(run.jobId);
    if (!job) return;
    if (run.state !== 'sending') return parts.processReply(run.id);
    metrics.instruction('reply', 'unknown', 'restart');
    await ctx.applyQueued(
      {
        jobId: job.id,
        owner: { instanceId: ctx.instanceId, runIds: [run.id] },
        run: { id: run.id, patch: { state: 'unknown', error: 'restarted while sending' } },
        enqueue: [
          threadPost({
            job,
            key: keys.followUpUnknown({ jobId: job.id, runId: run.id }),
            kind: 'notice',
            text: text.followUpRestarted(run.authorId),
            run,
          }),
        ],
      },
      now(),
    );
  }

  return {
    async recover({ jobs, runs }: Orphans): Promise<void> {
      for (const job of jobs) await recoverJob(job);
      for (const run of runs) await recoverRun(run);
      // Each step woke the outbox for what it queued; one more wake at the end keeps a take-over
      // round, even one that queued nothing, ending with the outbox looking.
      ctx.loops.outbox.kick();
    },
  };
}

/**
 * Recovers orphaned work the take-over round gave this instance (left by a stopped instance, or
 * handed back when no slot was free): one task per job or follow-up, and what finds no slot is
 * handed back again. The job
 * service is asked for when work arrives, because membership (which hands work over) is built
 * before it.
 */
export function recoverOrphans(
  tasks: Pick<TaskTracker, 'run'>,
  jobs: () => Pick<JobService, 'recover' | 'handBack'>,
): (orphans: Orphans) => void {
  return (orphans) => {
    const left = { jobIds: [] as number[], runIds: [] as number[] };
    for (const job of orphans.jobs) {
      if (!tasks.run('recover interrupted work', () => jobs().recover({ jobs: [job], runs: [] })))
        left.jobIds.push(job.id);
    }
    for (const run of orphans.runs) {
      if (!tasks.run('recover interrupted work', () => jobs().recover({ jobs: [], runs: [run] })))
        left.runIds.push(run.id);
    }
    void jobs().handBack(left);
  };
}
