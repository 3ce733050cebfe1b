import type { Orphans } from '../store/types.js';
import type { TaskTracker } from '../util/tasks.js';
import type { JobService } from './job-service.js';

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
