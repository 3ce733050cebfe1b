import { afterEach, describe, expect, it } from 'vitest';
import { jobMethods } from '../../src/store/jobs.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { areaStatements, HANDED_BACK } from '../helpers/store-statements.js';
import { createRun, followUp, newJob, T0 } from './store-contract.js';

for (const [handedBack, awaited] of HANDED_BACK) {
  describe(`jobs and their runs, their statements handed back ${handedBack}`, () => {
    const store = openSqliteStore(':memory:');
    const { ran, engine } = areaStatements({ awaited, db: store.db });
    const jobs = jobMethods(engine);
    afterEach(() => {
      ran.length = 0;
    });

    it('finds a job by id and by thread, and the thread of a message still open in it', async () => {
      const { job } = await store.insertJob(
        newJob('find', { threadTs: '1700000000.000100' }),
        createRun(),
        T0,
      );
      await store.insertFollowUp(job.id, followUp('1700000000.000200'), T0 + 1);
      expect((await jobs.getJob(job.id))?.triggerKey).toBe('find');
      expect(await jobs.getJob(job.id + 100)).toBeUndefined();
      expect((await jobs.findJobByThread('C0DOCS', '1700000000.000100'))?.id).toBe(job.id);
      expect(await jobs.findJobByThread('C0OTHER', '1700000000.000100')).toBeUndefined();
      expect(await jobs.threadOfOpenMessage('C0DOCS', '1700000000.000200')).toBe('1700000000.000100');
      expect(await jobs.threadOfOpenMessage('C0DOCS', '1700000000.000999')).toBeUndefined();
    });

    it('moves a job only from the phase the caller saw, and counts the active ones', async () => {
      const { job } = await store.insertJob(newJob('move'), createRun(), T0);
      const active = await jobs.countActiveJobs();
      expect(await jobs.transitionJob(job.id, 'accepted', 'active', T0 + 1)).toBe(true);
      expect(await jobs.transitionJob(job.id, 'accepted', 'active', T0 + 2)).toBe(false);
      expect(await jobs.countActiveJobs()).toBe(active + 1);
    });

    it('reads recent jobs by the filter given: a person’s or a channel’s', async () => {
      await store.insertJob(
        newJob('recent', { requesterId: 'U0CAROL', channelId: 'C0RECENT' }),
        createRun(),
        T0,
      );
      expect((await jobs.recentJobs({ requesterId: 'U0CAROL' }, 5)).map((j) => j.triggerKey)).toEqual([
        'recent',
      ]);
      expect((await jobs.recentJobs({ channelId: 'C0RECENT' }, 5)).map((j) => j.triggerKey)).toEqual([
        'recent',
      ]);
      expect(ran.map((r) => r.name)).toEqual(['recentJobsOfRequester', 'recentJobsOfChannel']);
    });

    it('answers no due time when nothing is due, and records the root reaction before resolving', async () => {
      expect(await jobs.nextDueAt(T0)).toBeUndefined();
      expect(await jobs.dueJobs(T0, 10)).toEqual([]);
      const { job } = await store.insertJob(newJob('react'), createRun(), T0);
      await jobs.setRootReaction(job.id, 'eyes');
      expect((await store.getJob(job.id))?.rootReaction).toBe('eyes');
    });

    it('reads a job’s runs, and claims a pending one once', async () => {
      const { job, run } = await store.insertJob(newJob('runs'), createRun(), T0);
      const { run: second } = await store.insertFollowUp(job.id, followUp('1700000000.000200'), T0 + 1);
      expect((await jobs.getRun(run.id))?.kind).toBe('create');
      expect(await jobs.getRun(second.id + 100)).toBeUndefined();
      expect((await jobs.getRuns(job.id)).map((r) => r.id)).toEqual([run.id, second.id]);
      expect((await jobs.pendingRuns(job.id)).map((r) => r.id)).toContain(second.id);
      expect(await jobs.readyRuns(job.id)).toEqual([]);
      expect(await jobs.claimRun(second.id, T0 + 2)).toBe(true);
      expect(await jobs.claimRun(second.id, T0 + 3)).toBe(false);
      expect((await jobs.getRun(second.id))?.state).toBe('sending');
    });
  });
}
