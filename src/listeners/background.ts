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
