import type { AgentClient } from '../agent/client.js';
import { AgentNotFoundError } from '../agent/errors.js';
import type { AgentJob } from '../agent/schema.js';
import { text } from '../blocks/messages.js';
import { agentErrorText } from '../blocks/refusal-texts.js';
import { type Leases, readyForCall } from '../cluster/membership.js';
import { cardUpdate } from '../delivery/kinds/card-update.js';
import { type PrivateTarget, privateNote } from '../delivery/kinds/private-note.js';
import { receivedReaction } from '../delivery/kinds/reaction.js';
import { threadPost } from '../delivery/kinds/thread-post.js';
import { keys } from '../delivery/outbox-registry.js';
import { currentRun } from '../delivery/sessions.js';
import { enterPhase, STILL_STARTING, TAKES_FOLLOW_UPS } from '../domain/phases.js';
import type { Logger } from '../logging/logger.js';
import { joinMrkdwn, type Mrkdwn, md, userMention } from '../slack/mrkdwn.js';
import type { ClusterStore, JobIn, JobRecord, JobsStore, RunRecord, RunsStore } from '../store/types.js';
import {
  errorMessage,
  isUnknownOutcome,
  logAgentError,
  recordAgentAnswer,
  startedPatch,
} from './agent-outcomes.js';
import type { JobSettings, OutboxWrites, Wakeable } from './job-context.js';
import type { MetricsHooks } from './metrics-hooks.js';

/** How soon a batch whose sending failed before reaching the agent API is tried again, in milliseconds. */
export const BATCH_RETRY_MS = 5_000;

export interface FollowUpsDeps {
  store: Pick<JobsStore, 'getJob'> &
    Pick<RunsStore, 'readyRuns'> &
    Pick<ClusterStore, 'claimReadyRuns' | 'renewClaim'>;
  instanceId: string;
  agentFor: (projectId: string | null) => AgentClient;
  logger: Logger;
  settings: Pick<JobSettings, 'poll' | 'followUps'>;
  /** The poller, woken when a follow-up starts a run. */
  loops: { poller: Wakeable };
  applyQueued: OutboxWrites['applyQueued'];
  /** Runs background work (a batch whose window has passed) among the tracked tasks; false when full. */
  runTask: (name: string, work: () => Promise<void>) => boolean;
  /** What becomes of the replies, for the metrics endpoint. */
  metrics: Pick<MetricsHooks, 'instruction'>;
  now: () => number;
  /** How long the claim on a batch lasts while it is sent (see {@link JobServiceDeps.leases}). */
  leases: Pick<Leases, 'agentWrite'>;
  monotonic: () => number;
}

export interface FollowUps {
  /**
   * Sends the job's checked (`ready`) replies as one follow-up once the batch window of the
   * oldest has passed, or explains why they cannot be sent. Replies wait while the job is being
   * created.
   */
  dispatchReady(jobId: number): Promise<void>;
  /** Marks a run refused or failed before it was sent, and tells its author privately. */
  dropRun(job: JobRecord, run: RunRecord, reason: string, note: string, to: PrivateTarget): Promise<void>;
  /** Stops waiting for batch windows; waiting replies stay `ready` for whoever takes over. */
  stop(): void;
}

/** Follow-ups: replies in a job's thread, batched and sent to the agent. */
export function createFollowUps(deps: FollowUpsDeps): FollowUps {
  const { store, logger, now } = deps;
  const agentOf = (job: JobRecord) => deps.agentFor(job.projectId);

  /** Marks a run refused or failed before it was sent, and tells its author privately. */
  async function dropRun(job: JobRecord, run: RunRecord, reason: string, note: Mrkdwn, to: PrivateTarget) {
    await deps.applyQueued(
      {
        jobId: job.id,
        // A reply its author deleted meanwhile is gone already: nothing to tell them.
        expectRun: { id: run.id, states: ['pending', 'ready'] },
        run: { id: run.id, patch: { state: 'failed', error: reason } },
        enqueue: [privateNote(job.id, keys.dropped({ runId: run.id }), to, note)],
      },
      now(),
    );
  }

  /**
   * A stop pressed while a batch was on its way covered the run the batch would have started
   * (see `features/stop/record.ts`); the batch failed, so that run never began: the stop goes
   * back to the run the agent has, and a later reply's run shows as working.
   */
  async function unstopUnstarted(jobId: number): Promise<void> {
    const job = await store.getJob(jobId);
    const run = job && currentRun(job);
    if (!job || run === undefined || job.stoppedRun === null || job.stoppedRun <= run) return;
    await deps.applyQueued(
      { jobId, expect: { phase: job.phase, runCount: job.runCount }, job: { stoppedRun: run } },
      now(),
    );
  }

  /** One follow-up for the agent from a batch of replies (each reply's text, in order). */
  const batchPrompt = (runs: RunRecord[]) => runs.map((r) => r.prompt).join('\n\n');

  /** Sends every checked reply of the job as one follow-up (a batch). */
  async function sendBatch(job: JobIn<'active' | 'idle'>): Promise<void> {
    const agentJobId = job.agentJobId;
    if (!agentJobId) return;
    // Claimed atomically: each reply's task, and the flush after create, may all get here. The
    // claim covers the batch for one follow-up call, timed by the store's clock; read before the
    // claim is asked for, so the claim began later, never earlier.
    const grantedAt = deps.monotonic();
    const { leaseMs } = deps.leases.agentWrite;
    const runs = await store.claimReadyRuns(job.id, deps.instanceId, now(), leaseMs);
    const first = runs[0];
    if (!first) return;
    const runIds = runs.map((r) => r.id);
    const renew = () => store.renewClaim(deps.instanceId, { runIds }, leaseMs);
    if (!(await readyForCall(deps.leases.agentWrite, renew, grantedAt, deps.monotonic))) {
      logger.warn('another instance took this follow-up over; not sending it', { jobId: job.id, runIds });
      return;
    }
    // What the call's answer writes applies only while this instance still owns the batch.
    const owner = { instanceId: deps.instanceId, runIds };
    const authors = [...new Set(runs.map((r) => r.authorId))];
    let agentJob: AgentJob;
    try {
      agentJob = await agentOf(job).sendMessage(agentJobId, batchPrompt(runs));
    } catch (error) {
      logAgentError(logger, error, { jobId: job.id, agentJobId, op: 'follow-up' });
      const gone = error instanceof AgentNotFoundError;
      const note = md`${joinMrkdwn(authors.map(userMention), md` `)} ${agentErrorText(error, 'follow-up')}`;
      const state = isUnknownOutcome(error) ? ('unknown' as const) : ('failed' as const);
      deps.metrics.instruction('reply', state, 'agent', runs.length);
      const forgotten = gone ? { ...enterPhase(job.phase, 'gone'), nextPollAt: null } : undefined;
      await deps.applyQueued(
        {
          jobId: job.id,
          owner,
          ...(forgotten ? { job: forgotten } : {}),
          runs: runs.map((r) => ({ id: r.id, patch: { state, error: errorMessage(error) } })),
          enqueue: [
            threadPost({
              job,
              key: keys.followUpError({ jobId: job.id, runId: first.id }),
              kind: 'notice',
              text: note,
              run: first,
              covers: runs,
            }),
            ...(forgotten ? cardUpdate({ ...job, ...forgotten }) : []),
          ],
        },
        now(),
      );
      await unstopUnstarted(job.id);
      return;
    }
    // Only the agent call is in the try above: the agent has the follow-up now.
    const at = now();
    const patch = startedPatch(job.phase, agentJob, at, deps.settings.poll.intervalMs);
    await recordAgentAnswer(
      () =>
        deps.applyQueued(
          {
            jobId: job.id,
            owner,
            job: patch,
            runs: runs.map((r) => ({ id: r.id, patch: { state: 'sent' as const, sentAt: at } })),
            incrementRunCount: true,
            enqueue: [...runs.flatMap((r) => receivedReaction(job, r)), ...cardUpdate({ ...job, ...patch })],
          },
          at,
        ),
      logger,
    );
    logger.info('follow-up sent', { jobId: job.id, agentJobId, runs: runs.map((r) => r.seq) });
    deps.metrics.instruction('reply', 'sent', undefined, runs.length);
    deps.loops.poller.kick();
  }

  /** One timer per job waiting for its batch window; none holds a task slot while it waits. */
  const batchTimers = new Map<number, NodeJS.Timeout>();
  let stopped = false;
  function waitForBatch(jobId: number, ms: number): void {
    if (stopped || batchTimers.has(jobId)) return;
    const timer = setTimeout(() => {
      batchTimers.delete(jobId);
      // The job may have moved on meanwhile, and more replies may have joined the batch.
      const taken = deps.runTask('send follow-ups', () =>
        dispatchReady(jobId).catch((error: unknown) => {
          // The store could not be read: the replies stay `ready`; try again shortly.
          logger.warn('could not send waiting follow-ups; will retry', { jobId, error });
          waitForBatch(jobId, BATCH_RETRY_MS);
        }),
      );
      // No slot free: the replies stay `ready` (one timer per job holds their turn).
      if (!taken) waitForBatch(jobId, BATCH_RETRY_MS);
    }, ms);
    batchTimers.set(jobId, timer);
  }

  /**
   * Sends the job's checked replies once the batch window of the oldest has passed, or explains
   * why they cannot be sent. Replies wait while the job is still being created.
   */
  async function dispatchReady(jobId: number): Promise<void> {
    // Most jobs never get a follow-up before they are created: the job is read only for one.
    const ready = await store.readyRuns(jobId);
    const oldest = ready[0];
    const job = oldest && (await store.getJob(jobId));
    if (!job || !oldest) return;
    // Sent as soon as the create call answers.
    if (STILL_STARTING.has(job.phase)) return;
    if (TAKES_FOLLOW_UPS.has(job.phase)) {
      const wait = oldest.createdAt + deps.settings.followUps.batchMs - now();
      if (wait > 0) return waitForBatch(jobId, wait);
      return sendBatch({ ...job, phase: job.phase });
    }
    // The job has ended: there is nothing to send the replies to.
    const note = job.phase === 'gone' ? text.followUpJobGone() : text.followUpNoJob(job.phase);
    for (const run of ready) {
      const to = {
        channelId: job.channelId,
        userId: run.authorId,
        threadTs: job.threadTs,
        responseUrl: null,
      };
      deps.metrics.instruction('reply', 'refused', 'no_job');
      await dropRun(job, run, `job is ${job.phase}`, note, to);
    }
  }

  return {
    dispatchReady,
    dropRun,
    stop() {
      stopped = true;
      for (const timer of batchTimers.values()) clearTimeout(timer);
      batchTimers.clear();
    },
  };
}
