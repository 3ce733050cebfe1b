import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { createRun, newJob, T0 } from '../store-contract.js';

describe('SQLite inserts committed per turn of the event loop', () => {
  let store: ReturnType<typeof openSqliteStore>;
  beforeEach(() => {
    store = openSqliteStore(':memory:');
  });
  afterEach(async () => {
    await store.close();
  });

  it('commits the jobs recorded in one turn together, each insert resolving only after that commit', async () => {
    const first = store.insertJob(newJob('a'), createRun(), T0);
    // The first insert opened the turn's transaction; the second joins it.
    expect(store.db.inTransaction).toBe(true);
    const second = store.insertJob(newJob('b'), createRun(), T0);
    let settled = 0;
    void first.then(() => settled++);
    await Promise.resolve();
    expect(settled).toBe(0);
    const [a, b] = await Promise.all([first, second]);
    expect(store.db.inTransaction).toBe(false);
    expect([a.created, b.created]).toEqual([true, true]);
    expect(a.job.id).not.toBe(b.job.id);
  });

  it('commits the open group before any other call, so background writes are durable when they return', async () => {
    const insert = store.insertJob(newJob('a'), createRun(), T0);
    expect(store.db.inTransaction).toBe(true);
    const job = await store.getJob(1);
    expect(store.db.inTransaction).toBe(false);
    expect(job?.triggerKey).toBe('a');
    expect((await insert).created).toBe(true);
  });

  it('rejects every insert of a group whose commit fails, keeps none of them, and records the next one', async () => {
    const first = store.insertJob(newJob('a'), createRun(), T0);
    const second = store.insertJob(newJob('b'), createRun(), T0);
    // A write in the same transaction that breaks a foreign key, checked only at commit.
    store.db.pragma('defer_foreign_keys = ON');
    store.db
      .prepare(
        "INSERT INTO runs (job_id, seq, kind, prompt, author_id, state, created_at) VALUES (999, 1, 'create', 'x', 'U0X', 'pending', 0)",
      )
      .run();
    await expect(first).rejects.toThrow(/FOREIGN KEY/);
    await expect(second).rejects.toThrow(/FOREIGN KEY/);
    expect(await store.recentJobs({ channelId: 'C0DOCS' }, 10)).toEqual([]);
    const next = await store.insertJob(newJob('a'), createRun(), T0 + 1);
    expect(next.created).toBe(true);
  });

  it('undoes a failed insert alone, and commits the rest of its group', async () => {
    const good = store.insertJob(newJob('good'), createRun(), T0);
    const bad = store.insertJob(newJob('bad', { pollIntervalMs: Number.NaN }), createRun(), T0);
    await expect(bad).rejects.toThrow();
    expect((await good).created).toBe(true);
    expect((await store.recentJobs({ channelId: 'C0DOCS' }, 10)).map((j) => j.triggerKey)).toEqual(['good']);
  });
});
