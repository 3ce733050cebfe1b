import type { TaskTracker } from '../util/tasks.js';
import type { JobService } from './job-service.js';
import type { MentionOutcome } from './requests.js';

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
