import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { createRun, followUp, newJob, post, T0 } from '../store-contract.js';

/** A store whose clock the test sets: heartbeats, claims and holds are timed by it. */
describe('SQLite cluster, timed by the store’s clock', () => {
  let clock: number;
  let store: ReturnType<typeof openSqliteStore>;
  beforeEach(() => {
    clock = T0;
    store = openSqliteStore(':memory:', { now: () => clock });
  });
  afterEach(async () => {
    await store.close();
  });

  /** An active job, due at `T0`. */
  const dueJob = async (triggerKey: string) => {
    const { job } = await store.insertJob(newJob(triggerKey), createRun(), T0);
    await store.apply({ jobId: job.id, job: { phase: 'active', nextPollAt: T0 } }, T0);
    return job;
  };

  it('a heartbeat is recorded at the store’s time, and counts as live for the time-out after it', async () => {
    expect(await store.heartbeat('i-1')).toBe(T0);
    clock = T0 + 200;
    expect(await store.liveInstances(250)).toBe(1);
    clock = T0 + 251;
    expect(await store.liveInstances(250)).toBe(0);
    expect(await store.heartbeat('i-1')).toBe(T0 + 251);
    expect(await store.liveInstances(250)).toBe(1);
  });

  it('a poll claim lasts its lease by the store’s clock, whatever due time the caller sends', async () => {
    const job = await dueJob('claimed');
    // Not due yet by the caller's due time: nothing is claimed.
    expect(await store.claimDueJobs('i-1', T0 - 1, 10, 100)).toEqual([]);
    clock = T0 + 1_000;
    const [claimed] = await store.claimDueJobs('i-1', T0, 10, 100);
    expect(claimed).toMatchObject({ id: job.id, claimedBy: 'i-1', claimedUntil: T0 + 1_100 });
    // A caller sending a far later time does not end the claim early.
    expect(await store.claimDueJobs('i-2', T0 + 10_000_000, 10, 100)).toEqual([]);
    clock = T0 + 1_100;
    expect((await store.claimDueJobs('i-2', T0, 10, 100)).map((j) => j.claimedBy)).toEqual(['i-2']);
  });

  it('a delivery claim and a hold run until the store’s time plus the lease', async () => {
    await store.enqueue([{ jobId: null, dedupeKey: null, payload: post('hello') }], T0);
    clock = T0 + 50;
    const [item] = await store.claimOutbox('i-1', T0, 10, 500);
    expect(item).toMatchObject({ claimedBy: 'i-1', claimedUntil: T0 + 550 });
    clock = T0 + 100;
    expect(await store.renewHold('i-1', { outboxId: item?.id ?? 0 }, 500)).toBe(true);
    expect((await store.claimOutbox('i-2', T0, 10, 500)).length).toBe(0);

    const { job } = await store.insertJob(newJob('held', { owner: 'i-1' }), createRun(), T0);
    expect(await store.renewHold('i-1', { jobId: job.id }, 300)).toBe(true);
    expect((await store.getJob(job.id))?.ownerUntil).toBe(T0 + 400);
    // Only the owner holds it.
    expect(await store.renewHold('i-2', { jobId: job.id }, 300)).toBe(false);
  });

  it('holds runs only when the instance owns every one of them', async () => {
    const { job } = await store.insertJob(newJob('runs'), createRun(), T0);
    const mine = await store.insertFollowUp(job.id, { ...followUp('1.1'), owner: 'i-1' }, T0);
    const theirs = await store.insertFollowUp(job.id, { ...followUp('1.2'), owner: 'i-2' }, T0);
    expect(await store.renewHold('i-1', { runIds: [mine.run.id] }, 100)).toBe(true);
    expect((await store.getRun(mine.run.id))?.ownerUntil).toBe(T0 + 100);
    expect(await store.renewHold('i-1', { runIds: [mine.run.id, theirs.run.id] }, 100)).toBe(false);
  });

  it('a retiring instance gives up its claims, and its holds unless told to keep them', async () => {
    const job = await dueJob('retire');
    await store.claimDueJobs('i-1', T0, 10, 60_000);
    const { job: started } = await store.insertJob(newJob('started', { owner: 'i-1' }), createRun(), T0);
    await store.renewHold('i-1', { jobId: started.id }, 60_000);
    await store.heartbeat('i-1');

    await store.retireInstance('i-1', { keepHolds: true });
    expect(await store.getJob(job.id)).toMatchObject({ claimedBy: null, claimedUntil: null });
    expect((await store.getJob(started.id))?.ownerUntil).toBe(T0 + 60_000);
    expect(await store.liveInstances(60_000)).toBe(0);

    await store.retireInstance('i-1');
    expect(await store.getJob(started.id)).toMatchObject({ owner: 'i-1', ownerUntil: null });
  });
});

describe('SQLite take-over', () => {
  it('takes every other instance’s work at once, whatever its heartbeat, holds and claims say', async () => {
    // One process uses the file: an instance on record beside this one is an earlier run of it.
    const store = openSqliteStore(':memory:');
    try {
      await store.heartbeat('i-earlier');
      const { job } = await store.insertJob(newJob('earlier', { owner: 'i-earlier' }), createRun(), T0);
      expect(await store.renewHold('i-earlier', { jobId: job.id }, 60_000)).toBe(true);
      await store.enqueue([{ jobId: null, dedupeKey: null, payload: post('claimed') }], T0);
      expect(await store.claimOutbox('i-earlier', T0, 10, 60_000)).toHaveLength(1);

      const taken = await store.takeOverOrphans('i-now', 30_000);
      expect(taken.jobs.map((j) => [j.id, j.owner, j.ownerUntil])).toEqual([[job.id, 'i-now', null]]);
      expect(await store.dueOutbox(T0, 10)).toHaveLength(1);
      expect(await store.liveInstances(30_000)).toBe(0);
    } finally {
      await store.close();
    }
  });
});
