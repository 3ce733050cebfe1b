import type { AgentJob } from '../agent/schema.js';
import { text } from '../blocks/messages.js';
import { outcomePost } from '../blocks/status-card.js';
import { cardUpdate } from '../delivery/kinds/card-update.js';
import { threadPost } from '../delivery/kinds/thread-post.js';
import { keys } from '../delivery/outbox-registry.js';
import { enterPhase, expectPhase, POLLED } from '../domain/phases.js';
import type { Block } from '../slack/blocks.js';
import type { JobPatch, JobRecord, RunOutcome } from '../store/types.js';
import { fromAgentJob } from './agent-outcomes.js';
import type { JobContext } from './job-context.js';
import { createJobPrivacyChecks } from './job-privacy.js';
import { type NotifySettings, outcomeNotifications } from './notifications.js';

/** What the poller observed of a run: its outcome, or that it may not poll. */
export interface RunOutcomes {
  /**
   * Records the terminal outcome of the job's open runs and queues its post. `job` is the
   * snapshot the outcome was observed against; false when the job has moved on since. The poll
   * claim on the job ends in the same write (true), as a reschedule's does.
   */
  finishRun(job: JobRecord, outcome: RunOutcome, agentJob?: AgentJob): Promise<boolean>;
  /** Tells the thread, once per run, that polling is refused (the admin key). */
  notePollRefused(job: JobRecord): Promise<void>;
}

/** What recording an outcome needs: it is built before the poller, which reports to it. */
export type RunOutcomesDeps = Pick<
  JobContext,
  'store' | 'logger' | 'metrics' | 'now' | 'hints' | 'settings' | 'applyQueued' | 'enqueue' | 'audiences'
> & {
  /** Outcomes told outside the job's thread (`NOTIFY_*`). Default: the thread only. */
  notify?: NotifySettings;
  /**
   * What the features put below the outcome on every outcome post, for the outcome (job and
   * run) it is: the feedback buttons. Handed in by the composition root, so the kernel renders
   * them without knowing the feature.
   */
  belowOutcome: (jobId: number, runSeq: number) => Block[];
};

export function createRunOutcomes(ctx: RunOutcomesDeps): RunOutcomes {
  const { store, logger, metrics, now } = ctx;
  const privacy = createJobPrivacyChecks(ctx);
  return {
    async finishRun(job, outcome, agentJob) {
      // Every run the agent accepted and that has no outcome yet ends here: a follow-up sent
      // while the agent was still working merges into the same result.
      const open = (await store.getRuns(job.id)).filter((r) => r.state === 'sent' && r.outcome === null);
      const latest = open.at(-1);
      const at = now();
      // The poller finishes the runs of the jobs it watches, and only those.
      const from = expectPhase(job.phase, POLLED);
      const patch: JobPatch = {
        ...(agentJob ? fromAgentJob(agentJob) : {}),
        ...enterPhase(from, outcome === 'gone' ? 'gone' : 'idle'),
        lastOutcome: outcome,
        nextPollAt: null,
        claimedBy: null,
        claimedUntil: null,
      };
      const updated = { ...job, ...patch };
      const notify = [...new Set([job.requesterId, ...open.map((r) => r.authorId)])];
      const post = outcomePost(outcome, updated, notify, ctx.settings.poll.maxAgeMs, ctx.hints);
      // Told outside the thread only with the thread's own outcome post, in the same write.
      const elsewhere = latest
        ? await outcomeNotifications({ ...ctx, privacy }, outcome, updated, latest)
        : [];
      const applied = await ctx.applyQueued(
        {
          jobId: job.id,
          expect: { phase: job.phase, runCount: job.runCount },
          job: patch,
          runs: open.map((r) => ({ id: r.id, patch: { outcome, outcomeAt: at } })),
          enqueue: [
            ...(latest
              ? [
                  threadPost({
                    job: updated,
                    key: keys.outcome({ jobId: job.id, runSeq: latest.seq }),
                    kind: 'outcome',
                    text: post.text,
                    run: latest,
                    covers: open,
                    blocks: [...post.blocks, ...ctx.belowOutcome(job.id, latest.seq)],
                  }),
                ]
              : []),
            ...elsewhere,
            ...cardUpdate(updated),
          ],
        },
        at,
      );
      if (!applied) {
        logger.info('poll answer ignored: the job changed meanwhile', { jobId: job.id });
        return false;
      }
      logger.info('run finished', {
        jobId: job.id,
        agentJobId: job.agentJobId,
        runs: open.map((r) => r.seq),
        outcome,
      });
      metrics.runFinished(outcome);
      return true;
    },

    async notePollRefused(job) {
      await ctx.enqueue(
        [
          threadPost({
            job,
            key: keys.pollRefused({ jobId: job.id, runCount: job.runCount }),
            kind: 'notice',
            text: text.pollRefused(job.requesterId),
          }),
        ],
        now(),
      );
    },
  };
}
