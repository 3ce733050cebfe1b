import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clusterMethods } from '../../src/store/cluster-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Engine } from '../../src/store/statements.js';
import { areaStatements, HANDED_BACK } from '../helpers/store-statements.js';
import { createRun, followUp, newJob, post, T0 } from './store-contract.js';

for (const [handedBack, awaited] of HANDED_BACK) {
  describe(`heartbeats and single-statement claims, handed back ${handedBack}`, () => {
    it('answers a heartbeat with the store’s time and counts the instances heard from', async () => {
      const store = openSqliteStore(':memory:');
      const cluster = clusterMethods(areaStatements({ awaited, db: store.db, clock: () => T0 + 7 }).engine);
      expect(await cluster.liveInstances(1_000)).toBe(0);
      expect(await cluster.heartbeat('instance-a')).toBe(T0 + 7);
      expect(await cluster.liveInstances(1_000)).toBe(1);
      await store.close();
    });

    it('claims a due job for one instance only, and releases it', async () => {
      const store = openSqliteStore(':memory:');
      const cluster = clusterMethods(areaStatements({ awaited, db: store.db, clock: () => T0 }).engine);
      const { job } = await store.insertJob(newJob('claim'), createRun(), T0);
      await store.apply({ jobId: job.id, job: { phase: 'active', nextPollAt: T0 } }, T0);
      expect((await cluster.claimDueJobs('instance-a', T0, 10, 60_000)).map((j) => j.id)).toEqual([job.id]);
      expect(await cluster.claimDueJobs('instance-b', T0, 10, 60_000)).toEqual([]);
      await cluster.releaseJob(job.id, 'instance-a');
      expect((await cluster.claimDueJobs('instance-b', T0, 10, 60_000)).map((j) => j.id)).toEqual([job.id]);
      await store.close();
    });
  });
}

describe('heartbeats and claims whatever the engine returns', () => {
  const returning = (rows: unknown[]): Engine => ({
    one: (_name, _params, parse) => (rows[0] === undefined ? undefined : parse(rows[0] as never)),
    many: (_name, _params, parse) => rows.map((row) => parse(row as never)),
    write: () => 1,
    update: () => 1,
    transaction: () => Promise.reject(new Error('no transaction here')),
    shared: false,
  });

  it('refuses a heartbeat without a time rather than report one', async () => {
    await expect(clusterMethods(returning([{ at: null }])).heartbeat('instance-a')).rejects.toThrow(
      'the heartbeat returned no time',
    );
    await expect(clusterMethods(returning([])).heartbeat('instance-a')).rejects.toThrow(
      'the heartbeat returned no time',
    );
  });
});

/** A store whose clock the test sets: heartbeats and claims are timed by it. */
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

  it('a delivery claim and a claim on a job being started run until the store’s time plus the lease', async () => {
    await store.enqueue([{ jobId: null, dedupeKey: null, payload: post('hello') }], T0);
    clock = T0 + 50;
    const [item] = await store.claimOutbox('i-1', T0, 10, 500);
    expect(item).toMatchObject({ claimedBy: 'i-1', claimedUntil: T0 + 550 });
    clock = T0 + 100;
    expect(await store.renewClaim('i-1', { outboxId: item?.id ?? 0 }, 500)).toBe(true);
    expect((await store.claimOutbox('i-2', T0, 10, 500)).length).toBe(0);

    const { job } = await store.insertJob(newJob('held', { owner: 'i-1' }), createRun(), T0);
    expect(await store.renewClaim('i-1', { jobId: job.id }, 300)).toBe(true);
    expect((await store.getJob(job.id))?.ownerUntil).toBe(T0 + 400);
    // Only the owner renews it.
    expect(await store.renewClaim('i-2', { jobId: job.id }, 300)).toBe(false);
  });

  it('renews the claims on a batch only when the instance owns every one of its runs', async () => {
    const { job } = await store.insertJob(newJob('runs'), createRun(), T0);
    const mine = await store.insertFollowUp(job.id, { ...followUp('1.1'), owner: 'i-1' }, T0);
    const theirs = await store.insertFollowUp(job.id, { ...followUp('1.2'), owner: 'i-2' }, T0);
    expect(await store.renewClaim('i-1', { runIds: [mine.run.id] }, 100)).toBe(true);
    expect((await store.getRun(mine.run.id))?.ownerUntil).toBe(T0 + 100);
    expect(await store.renewClaim('i-1', { runIds: [mine.run.id, theirs.run.id] }, 100)).toBe(false);
  });

  it('a retiring instance gives up its claims, but keeps those on work its calls under way are for', async () => {
    const job = await dueJob('retire');
    await store.claimDueJobs('i-1', T0, 10, 60_000);
    const { job: started } = await store.insertJob(newJob('started', { owner: 'i-1' }), createRun(), T0);
    await store.renewClaim('i-1', { jobId: started.id }, 60_000);
    await store.heartbeat('i-1');

    await store.retireInstance('i-1', { callsUnderWay: true });
    expect(await store.getJob(job.id)).toMatchObject({ claimedBy: null, claimedUntil: null });
    expect((await store.getJob(started.id))?.ownerUntil).toBe(T0 + 60_000);
    expect(await store.liveInstances(60_000)).toBe(0);

    await store.retireInstance('i-1');
    expect(await store.getJob(started.id)).toMatchObject({ owner: 'i-1', ownerUntil: null });
  });
});

describe('SQLite take-over', () => {
  it('takes every other instance’s work at once, whatever its heartbeat and claims say', async () => {
    // One process uses the file: an instance on record beside this one is an earlier run of it.
    const store = openSqliteStore(':memory:');
    try {
      await store.heartbeat('i-earlier');
      const { job } = await store.insertJob(newJob('earlier', { owner: 'i-earlier' }), createRun(), T0);
      expect(await store.renewClaim('i-earlier', { jobId: job.id }, 60_000)).toBe(true);
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
