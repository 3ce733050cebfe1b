import type { MentionOutcome } from '../jobs/requests.js';

import type { ListenerDeps } from './types.js';

/**
 * Hands recorded work to the background. When no slot is free it is not queued in memory: the
 * store already holds it, so it is left there for the take-over round, and Slack's answer never
 * waits for a slot.
 */
export function runRecorded(
  deps: Pick<ListenerDeps, 'tasks' | 'jobs'>,
  name: string,
  work: () => Promise<void>,
  recorded: { jobId: number } | { runId: number },
): void {
  if (deps.tasks.run(name, work)) return;
  void deps.jobs.handBack('jobId' in recorded ? { jobIds: [recorded.jobId] } : { runIds: [recorded.runId] });
}

/** Carries on what a message (a mention or a direct message) became: a new job, or a follow-up. */
export function carryOnMessage(
  deps: Pick<ListenerDeps, 'tasks' | 'jobs'>,
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
