import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { createRetentionSweep, DAY_MS, RETENTION_SWEEP_MS } from '../../src/store/retention.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import { createRun, newJob, T0 } from './store-contract.js';

describe('retention sweep', () => {
  let store: Store;
  let clock: number;
  const logs: string[] = [];
  const logger = createLogger({ level: 'debug', secrets: [], write: (line) => logs.push(line) });

  beforeEach(() => {
    // The loop's timers only: the store commits on the event loop's own turn.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    store = openSqliteStore(':memory:');
    clock = T0;
    logs.length = 0;
  });
  afterEach(async () => {
    vi.useRealTimers();
    await store.close();
  });

  /** A job finished at `at`; returns its id. */
  async function finishedJob(key: string, at: number): Promise<number> {
    const { job, run } = await store.insertJob(newJob(key), createRun(`Prompt ${key}`), at);
    await store.apply(
      { jobId: job.id, job: { phase: 'idle' }, run: { id: run.id, patch: { state: 'sent', sentAt: at } } },
      at,
    );
    return job.id;
  }

  const sweepOf = (retentionDays: number) =>
    createRetentionSweep({ store, logger, retentionDays, now: () => clock });

  it('erases jobs finished more than RETENTION_DAYS ago when it starts and then every hour, until stopped', async () => {
    const old = await finishedJob('old', T0);
    const younger = await finishedJob('younger', T0 + 30 * DAY_MS);
    clock = T0 + 90 * DAY_MS + 1;
    const sweep = sweepOf(90);
    sweep.start();
    await vi.advanceTimersByTimeAsync(0);
    expect((await store.getJob(old))?.instruction).toBe('(erased after 90 days)');
    expect((await store.getRuns(old))[0]?.prompt).toBe('');
    expect((await store.getJob(younger))?.instruction).toBe('Document the *younger* flow');
    expect(logs.join('\n')).toContain('retention: erased');

    clock = T0 + 120 * DAY_MS + 1;
    await vi.advanceTimersByTimeAsync(RETENTION_SWEEP_MS);
    expect((await store.getJob(younger))?.instruction).toBe('(erased after 90 days)');

    await sweep.stop();
    const late = await finishedJob('late', T0);
    await vi.advanceTimersByTimeAsync(3 * RETENTION_SWEEP_MS);
    expect((await store.getJob(late))?.instruction).toBe('Document the *late* flow');
  });

  it('keeps everything when RETENTION_DAYS is 0', async () => {
    const old = await finishedJob('forever', T0);
    clock = T0 + 10_000 * DAY_MS;
    const sweep = sweepOf(0);
    sweep.start();
    await vi.advanceTimersByTimeAsync(2 * RETENTION_SWEEP_MS);
    expect(await sweep.sweep()).toEqual({ jobs: 0, outboxItems: 0, homeViews: 0, assistantThreads: 0 });
    expect((await store.getJob(old))?.instruction).toBe('Document the *forever* flow');
    await sweep.stop();
  });
});
