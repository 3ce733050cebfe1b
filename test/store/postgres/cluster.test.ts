import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type PgStore, postgresAvailable, shownUrl, twoStoresOnFreshSchema } from '../../helpers/postgres.js';
import { createRun, newJob, T0 } from '../store-contract.js';

const server = await postgresAvailable();
const YEAR = 365 * 24 * 3_600_000;
/** The server's clock, in epoch ms, as the store's statements read it. */
const SERVER_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

describe.runIf(server.ok)('PostgreSQL cluster, timed by the database’s clock', () => {
  let store: PgStore;
  let other: PgStore;
  twoStoresOnFreshSchema(3, (a, b) => {
    store = a;
    other = b;
  });
  const serverNow = async () => Number((await store.pool.query(`SELECT ${SERVER_NOW} AS at`)).rows[0].at);
  /** An instance on record that was last heard from `agoMs` ago by the server's clock. */
  const heardFrom = (id: string, agoMs: number) =>
    store.pool.query(
      `INSERT INTO instances (id, started_at, heartbeat_at) VALUES ($1, ${SERVER_NOW} - $2, ${SERVER_NOW} - $2)`,
      [id, agoMs],
    );
  /** An active job due since `T0`. */
  const dueJob = async (triggerKey: string, channelId = 'C0DOCS') => {
    const { job } = await store.insertJob(newJob(triggerKey, { channelId }), createRun(), T0);
    await store.apply({ jobId: job.id, job: { phase: 'active', nextPollAt: T0 } }, T0);
    return job;
  };

  beforeEach(async () => {
    await store.pool.query('TRUNCATE jobs, runs, outbox, instances RESTART IDENTITY CASCADE');
    // This process's clock a year ahead: nothing below may depend on it.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + YEAR);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('records a heartbeat at the server’s time, not this process’s', async () => {
    const before = await serverNow();
    const at = await store.heartbeat('i-1');
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(await serverNow());
    expect(at).toBeLessThan(Date.now() - YEAR / 2);
    expect(await store.liveInstances(60_000)).toBe(1);
    await heardFrom('i-quiet', 120_000);
    expect(await store.liveInstances(60_000)).toBe(1);
  });

  it('holds a poll claim for its lease by the server’s clock, whatever due time a claimer sends', async () => {
    const job = await dueJob('claimed');
    const before = await serverNow();
    const [claimed] = await store.claimDueJobs('i-1', T0, 10, 60_000);
    expect(claimed?.id).toBe(job.id);
    expect(claimed?.claimedUntil).toBeGreaterThanOrEqual(before + 60_000);
    expect(claimed?.claimedUntil).toBeLessThanOrEqual((await serverNow()) + 60_000);
    // A claimer whose clock runs far ahead cannot take it early.
    expect(await other.claimDueJobs('i-2', Date.now() + 10 * YEAR, 10, 60_000)).toEqual([]);
    // A lease already run out by the server's clock is free at once.
    await store.releaseJob(job.id, 'i-1');
    await store.claimDueJobs('i-1', T0, 10, -1);
    expect((await other.claimDueJobs('i-2', T0, 10, 60_000)).map((j) => j.claimedBy)).toEqual(['i-2']);
  });

  it('takes over only work whose owner the server has not heard from and that no hold still covers', async () => {
    await heardFrom('i-gone', 10_000);
    await store.heartbeat('i-live');
    const { job: orphan } = await store.insertJob(newJob('orphan', { owner: 'i-gone' }), createRun(), T0);
    const { job: held } = await store.insertJob(newJob('held', { owner: 'i-gone' }), createRun(), T0);
    await store.insertJob(newJob('alive', { owner: 'i-live' }), createRun(), T0);
    // Held by the gone instance until a minute from now, by the server's clock.
    expect(await store.renewHold('i-gone', { jobId: held.id }, 60_000)).toBe(true);

    const taken = await other.takeOverOrphans('i-new', 5_000);
    expect(taken.jobs.map((j) => [j.id, j.owner])).toEqual([[orphan.id, 'i-new']]);
    const { rows } = await store.pool.query('SELECT id FROM instances ORDER BY id');
    expect(rows.map((r) => r.id)).toEqual(['i-live']);
    // Once its hold has run out, the held job is taken over too.
    await store.pool.query(`UPDATE jobs SET owner_until = ${SERVER_NOW} - 1 WHERE id = $1`, [held.id]);
    expect((await other.takeOverOrphans('i-new', 5_000)).jobs.map((j) => j.id)).toEqual([held.id]);
  });

  it('gives each orphan to one of two instances taking over at the same time', async () => {
    await heardFrom('i-gone', 10_000);
    const orphans: number[] = [];
    for (let i = 0; i < 6; i++)
      orphans.push((await store.insertJob(newJob(`o-${i}`, { owner: 'i-gone' }), createRun(), T0)).job.id);
    await store.heartbeat('i-a');
    await other.heartbeat('i-b');
    const [a, b] = await Promise.all([
      store.takeOverOrphans('i-a', 5_000),
      other.takeOverOrphans('i-b', 5_000),
    ]);
    const ids = [...a.jobs, ...b.jobs].map((j) => j.id).sort((x, y) => x - y);
    expect(ids).toEqual(orphans);
  });

  it('never gives one due job to two instances claiming at the same time', async () => {
    for (let i = 0; i < 6; i++) await dueJob(`due-${i}`, `C0CHAN${i % 2}`);
    const [a, b] = await Promise.all([
      store.claimDueJobs('i-a', T0, 4, 60_000),
      other.claimDueJobs('i-b', T0, 4, 60_000),
    ]);
    // A claimer skips the rows the other is taking rather than wait for them: none is taken twice.
    const ids = [...a, ...b].map((j) => j.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThanOrEqual(4);
    const rest = await other.claimDueJobs('i-b', T0, 10, 60_000);
    expect([...ids, ...rest.map((j) => j.id)].sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

if (!server.ok) console.warn(`PostgreSQL cluster tests NOT RUN: no server at ${shownUrl()} (${server.why})`);
