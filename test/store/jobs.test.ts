import { afterEach, describe, expect, it } from 'vitest';
import { changeHolds, jobMethods, readsJob } from '../../src/store/jobs.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Change } from '../../src/store/types.js';
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

const JOB = { phase: 'active', runCount: 2, owner: 'i-1' };

describe('whether a change still applies', () => {
  it('a change without expectations always applies, even to a job not read', () => {
    expect(changeHolds({ jobId: 1 }, undefined, undefined)).toBe(true);
    expect(readsJob({ jobId: 1, job: { phase: 'idle' } })).toBe(false);
  });

  it('expect: only while the job is in that phase at that run count', () => {
    const change: Change = { jobId: 1, expect: { phase: 'active', runCount: 2 } };
    expect(readsJob(change)).toBe(true);
    expect(changeHolds(change, JOB, undefined)).toBe(true);
    // A follow-up started a new run meanwhile: the late poll answer must not close it.
    expect(changeHolds(change, { ...JOB, runCount: 3 }, undefined)).toBe(false);
    expect(changeHolds(change, { ...JOB, phase: 'idle' }, undefined)).toBe(false);
    expect(changeHolds(change, undefined, undefined)).toBe(false);
  });

  it('expectRun: only while the run is in one of the states, and never for a missing run', () => {
    const change: Change = { jobId: 1, expectRun: { id: 7, states: ['ready', 'pending'] } };
    expect(readsJob(change)).toBe(false);
    expect(changeHolds(change, undefined, { state: 'ready' })).toBe(true);
    expect(changeHolds(change, undefined, { state: 'pending' })).toBe(true);
    // A batch took it to send meanwhile.
    expect(changeHolds(change, undefined, { state: 'sending' })).toBe(false);
    expect(changeHolds(change, undefined, undefined)).toBe(false);
  });

  it('owner of the job: only while that instance still owns it', () => {
    const change: Change = { jobId: 1, owner: { instanceId: 'i-1', job: true } };
    expect(readsJob(change)).toBe(true);
    expect(changeHolds(change, JOB, undefined)).toBe(true);
    expect(changeHolds(change, { ...JOB, owner: 'i-2' }, undefined)).toBe(false);
    expect(changeHolds(change, { ...JOB, owner: null }, undefined)).toBe(false);
    expect(changeHolds(change, undefined, undefined)).toBe(false);
  });

  it('owner of runs: only while it owns every one of them, a missing run counting as not owned', () => {
    const change: Change = { jobId: 1, owner: { instanceId: 'i-1', runIds: [3, 4] } };
    // The job's own owner is not asked unless `job` says so.
    expect(readsJob(change)).toBe(false);
    expect(changeHolds(change, { ...JOB, owner: 'i-2' }, undefined, ['i-1', 'i-1'])).toBe(true);
    expect(changeHolds(change, undefined, undefined, ['i-1', 'i-2'])).toBe(false);
    expect(changeHolds(change, undefined, undefined, ['i-1', null])).toBe(false);
    expect(changeHolds(change, undefined, undefined, ['i-1', undefined])).toBe(false);
  });

  it('every expectation must hold at once', () => {
    const change: Change = {
      jobId: 1,
      expect: { phase: 'active', runCount: 2 },
      expectRun: { id: 7, states: ['ready'] },
      owner: { instanceId: 'i-1', job: true, runIds: [7] },
    };
    expect(changeHolds(change, JOB, { state: 'ready' }, ['i-1'])).toBe(true);
    expect(changeHolds(change, JOB, { state: 'ready' }, ['i-2'])).toBe(false);
    expect(changeHolds(change, JOB, { state: 'sent' }, ['i-1'])).toBe(false);
    expect(changeHolds(change, { ...JOB, owner: 'i-2' }, { state: 'ready' }, ['i-1'])).toBe(false);
  });
});
