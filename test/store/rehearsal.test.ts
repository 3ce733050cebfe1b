import { describe, expect, it } from 'vitest';
import { REHEARSALS, rehearseInserts } from '../../src/store/rehearsal.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { NewJob } from '../../src/store/types.js';

describe('rehearsed inserts', () => {
  it('runs the insert of a command up to its limit and keeps none of them', async () => {
    const store = openSqliteStore(':memory:');
    const seen: NewJob[] = [];
    const done = await rehearseInserts(
      {
        rehearseInsert: (job, run, now) => {
          seen.push(job);
          return store.rehearseInsert(job, run, now);
        },
      },
      // A budget no machine runs out of: the limit is what is tested.
      { instanceId: 'i-test', pollIntervalMs: 5_000, budgetMs: 60_000 },
    );
    expect(done).toBe(REHEARSALS);
    expect(new Set(seen.map((job) => job.triggerKey)).size).toBe(REHEARSALS);
    expect(await store.recentJobs({ channelId: seen[0]?.channelId ?? '' }, 10)).toEqual([]);
    await store.close();
  });

  it('stops when its time is up', async () => {
    const done = await rehearseInserts(
      { rehearseInsert: () => new Promise((resolve) => setTimeout(resolve, 20)) },
      { instanceId: 'i-test', pollIntervalMs: 5_000, budgetMs: 50 },
    );
    expect(done).toBeGreaterThanOrEqual(1);
    expect(done).toBeLessThanOrEqual(3);
  });

  it('stops at the first failure, reports it and does not reject', async () => {
    let calls = 0;
    const reported: unknown[] = [];
    const done = await rehearseInserts(
      {
        rehearseInsert: async () => {
          calls += 1;
          if (calls === 3) throw new Error('disk I/O error');
        },
      },
      { instanceId: 'i-test', pollIntervalMs: 5_000, budgetMs: 60_000, onError: (e) => reported.push(e) },
    );
    expect(done).toBe(2);
    expect(calls).toBe(3);
    expect(reported).toEqual([new Error('disk I/O error')]);
  });
});
