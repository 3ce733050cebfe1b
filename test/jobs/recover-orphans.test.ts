import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createJobService, type JobService } from '../../src/jobs/job-service.js';
import { recoverOrphans } from '../../src/jobs/recover-orphans.js';
import type { RunRecord } from '../../src/store/types.js';
import { createTaskTracker, type TaskTracker } from '../../src/util/tasks.js';
import { createJobWorld, type JobWorld } from '../helpers/job-world.js';

let w: JobWorld;
let jobs: JobService | undefined;
beforeEach(() => {
  w = createJobWorld();
});
afterEach(async () => {
  jobs?.stop();
  jobs = undefined;
  await w.store.close();
});

/** The task tracker, with every piece of work it was given counted. */
function tracker(options: { concurrency: number; maxQueued: number }) {
  const real: TaskTracker = createTaskTracker(w.ctx.logger, options);
  return { run: vi.fn((name: string, work: () => Promise<void>) => real.run(name, work)), real };
}

/** A follow-up of an active job, recorded by this instance and never sent. */
async function waitingFollowUp(): Promise<RunRecord> {
  const { job } = await w.activeJob();
  return w.insertFollowUp(job.id);
}

describe('recoverOrphans', () => {
  it('carries on each job and follow-up as its own task, and hands nothing back when all fit', async () => {
    const tasks = tracker({ concurrency: 4, maxQueued: 10 });
    // Membership is built before the job service: the service is asked for when work arrives.
    const carryOn = recoverOrphans(tasks, () => jobs as JobService);
    jobs = createJobService(w.deps);
    const { job: first } = await w.insertJob();
    const { job: second } = await w.insertJob({}, 'Explain webhooks');
    const run = await waitingFollowUp();

    carryOn({ jobs: [first, second], runs: [run] });
    expect(tasks.run).toHaveBeenCalledTimes(3);
    expect(await tasks.real.drain(5_000)).toBe(true);

    // Both jobs were started, as if their commands had just arrived.
    expect(w.agent.createJob).toHaveBeenCalledTimes(2);
    expect((await w.job(first.id)).phase).not.toBe('accepted');
    expect((await w.job(second.id)).phase).not.toBe('accepted');
    // The follow-up was processed: it no longer waits for its checks.
    expect((await w.store.getRun(run.id))?.state).not.toBe('pending');
  });

  it('hands back to the store the jobs and follow-ups for which no slot is free', async () => {
    const tasks = tracker({ concurrency: 1, maxQueued: 0 });
    jobs = createJobService(w.deps);
    const { job: taken } = await w.insertJob();
    const { job: left } = await w.insertJob({}, 'Explain webhooks');
    const run = await waitingFollowUp();

    recoverOrphans(tasks, () => jobs as JobService)({ jobs: [taken, left], runs: [run] });
    await tasks.real.drain(5_000);
    // handBack is not awaited by recoverOrphans: let its store write land.
    await vi.waitFor(async () => expect((await w.job(left.id)).owner).toBeNull());

    expect(w.agent.createJob).toHaveBeenCalledOnce();
    expect((await w.job(taken.id)).phase).not.toBe('accepted');
    // Left for the next take-over round: unowned, untouched.
    expect(await w.job(left.id)).toMatchObject({ phase: 'accepted', owner: null });
    expect(await w.store.getRun(run.id)).toMatchObject({ state: 'pending', owner: null });
    expect(w.logs.some((l) => l.includes('left to the store for the next take-over round'))).toBe(true);
  });

  it('with no orphans, starts nothing and leaves nothing to the store', async () => {
    const tasks = tracker({ concurrency: 1, maxQueued: 0 });
    jobs = createJobService(w.deps);
    const handBack = vi.spyOn(jobs, 'handBack');
    recoverOrphans(tasks, () => jobs as JobService)({ jobs: [], runs: [] });
    expect(tasks.run).not.toHaveBeenCalled();
    expect(handBack).toHaveBeenCalledWith({ jobIds: [], runIds: [] });
    expect(w.logs.some((l) => l.includes('left to the store'))).toBe(false);
  });
});
