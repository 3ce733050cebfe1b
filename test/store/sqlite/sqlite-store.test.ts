import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queriesFor } from '../../../src/store/queries.js';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { type SqliteStore, storeFileEachTest } from '../../helpers/sqlite-file.js';
import { clusterContract } from '../cluster-contract.js';
import { retentionContract } from '../retention-contract.js';
import { createRun, followUp, newJob, post, storeContract, T0 } from '../store-contract.js';
import { usesContract } from '../uses-contract.js';

storeContract('SQLite (:memory:)', () => openSqliteStore(':memory:'));
usesContract('SQLite (:memory:)', () => openSqliteStore(':memory:'));
retentionContract('SQLite (:memory:)', () => openSqliteStore(':memory:'));
clusterContract('SQLite (:memory:)', () => openSqliteStore(':memory:'));
{
  // Two connections to one file: the second stands for a process started beside the first.
  let file = '';
  usesContract(
    'SQLite (two connections to one file)',
    () => {
      file = join(mkdtempSync(join(tmpdir(), 'docs-agent-uses-')), 'store.sqlite');
      return openSqliteStore(file);
    },
    () => openSqliteStore(file),
  );
}

describe('SQLite store on a file', () => {
  const file = storeFileEachTest();
  const { open } = file;

  it('checkpoint() copies the log into the database file', async () => {
    const store = open();
    const fileSize = () => statSync(file.path).size;
    const empty = fileSize();
    // Fewer pages than the 1,000 at which SQLite would copy them itself.
    for (let i = 0; i < 20; i++) await store.insertJob(newJob(`bulk-${i}`), createRun(), T0 + i);
    expect(fileSize()).toBe(empty);
    await store.checkpoint();
    expect(fileSize()).toBeGreaterThan(empty);
    expect((await store.recentJobs({ channelId: 'C0DOCS' }, 50)).length).toBe(20);
  });

  it('names the file when what is there is not a database', () => {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, 'Not a database: notes someone saved under the store’s name.\n'.repeat(100));
    expect(() => openSqliteStore(file.path)).toThrow(
      `the SQLite store at ${file.path} cannot be opened: file is not a database`,
    );
    // The file is left as it was.
    expect(readFileSync(file.path, 'utf8')).toMatch(/^Not a database/);
  });

  it('keeps jobs, runs and outbox items across a reopen', async () => {
    const first = open();
    const { job, run } = await first.insertJob(newJob('persist'), createRun('Persist me'), T0);
    await first.apply(
      {
        jobId: job.id,
        job: { phase: 'active', threadTs: '1700000000.000100', agentJobId: 'job_1', nextPollAt: T0 + 10 },
        run: { id: run.id, patch: { state: 'sent', sentAt: T0 + 1 } },
        incrementRunCount: true,
        enqueue: [{ jobId: job.id, dedupeKey: 'outcome:1', payload: post('Done') }],
      },
      T0 + 1,
    );
    const fu = await first.insertFollowUp(job.id, followUp('1700000000.000200'), T0 + 2);
    const jobBefore = await first.getJob(job.id);
    const runsBefore = await first.getRuns(job.id);
    const outboxBefore = await first.dueOutbox(T0 + 10, 10);
    await first.close();

    const second = open();
    expect(second.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(await second.getJob(job.id)).toEqual(jobBefore);
    expect(jobBefore).toMatchObject({ phase: 'active', agentJobId: 'job_1', runCount: 1 });
    expect(await second.getRuns(job.id)).toEqual(runsBefore);
    expect(runsBefore.map((r) => r.id)).toEqual([run.id, fu.run.id]);
    expect(await second.findJobByThread('C0DOCS', '1700000000.000100')).toEqual(jobBefore);
    expect(await second.dueOutbox(T0 + 10, 10)).toEqual(outboxBefore);
    expect(outboxBefore).toHaveLength(1);
    // A re-delivered reply is still recognized after the reopen.
    expect((await second.insertFollowUp(job.id, followUp('1700000000.000200'), T0 + 5)).created).toBe(false);
    // Still refused after the reopen: same trigger, same job.
    const again = await second.insertJob(newJob('persist'), createRun(), T0 + 6);
    expect(again.created).toBe(false);
    expect(again.job.id).toBe(job.id);
  });
});

describe('SQLite store constraints', () => {
  it('refuses a follow-up for a job that does not exist (foreign keys are on)', async () => {
    const store = openSqliteStore(':memory:');
    try {
      await expect(store.insertFollowUp(12345, followUp('1700000000.000200'), T0)).rejects.toThrow(
        /FOREIGN KEY/,
      );
      expect(await store.getRuns(12345)).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

describe('SQLite query plans', () => {
  let store: SqliteStore;
  // The statements the store runs, as it runs them.
  const q = queriesFor('sqlite');
  const plan = (sql: string, params: Record<string, unknown>) =>
    (
      store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ clock: 0, ...params }) as Array<{ detail: string }>
    ).map((r) => r.detail);
  /** A full table scan of `table` (not a scan through an index). */
  const fullScan = (table: string) => new RegExp(`^SCAN (TABLE )?${table}$`);

  beforeAll(async () => {
    store = openSqliteStore(':memory:');
    for (let i = 0; i < 300; i++) {
      const { job } = await store.insertJob(
        newJob(`plan-${i}`, { channelId: `C0CHAN${i % 5}` }),
        createRun(),
        T0 + i,
      );
      const phase = i % 10 === 0 ? 'active' : i % 10 === 1 ? 'posting' : 'idle';
      await store.apply(
        {
          jobId: job.id,
          job: { phase, threadTs: `1700000000.${String(i).padStart(6, '0')}`, nextPollAt: T0 + i * 7 },
          enqueue: [{ jobId: i % 3 === 0 ? null : job.id, dedupeKey: `plan-${i}`, payload: post(`p${i}`) }],
        },
        T0 + i,
      );
    }
    // As in a store that has been running: most runs long since sent.
    store.db.exec("UPDATE runs SET state = 'sent' WHERE id % 10 <> 0");
    store.db.exec('ANALYZE');
  });
  afterAll(async () => {
    await store.close();
  });

  it('finds due jobs through jobs_due, without a table scan or a sort', () => {
    const details = plan(q.dueJobs, { now: T0 + 1_000, limit: 50 });
    expect(
      details.some((d) => /USING INDEX jobs_due\b/.test(d)),
      details.join('; '),
    ).toBe(true);
    expect(details.filter((d) => fullScan('jobs').test(d))).toEqual([]);
    expect(details.filter((d) => d.includes('TEMP B-TREE'))).toEqual([]);
  });

  it('claims due jobs through a due-jobs index, never scanning every job', () => {
    const details = plan(q.claimDueJobs, {
      instanceId: 'i-1',
      now: T0 + 1_000,
      limit: 50,
      leaseMs: 120_000,
    });
    // The due rows come from the partial index per channel and next poll; only they are sorted
    // into turns (the fair share), not the table.
    expect(
      details.some((d) => /^SEARCH jobs USING INDEX jobs_due(_by_channel)? \(.*next_poll_at<\?\)/.test(d)),
      details.join('; '),
    ).toBe(true);
    expect(details.filter((d) => fullScan('jobs').test(d))).toEqual([]);
  });

  it('claims outbox items through outbox_due and outbox_job_pending', () => {
    const details = plan(q.claimOutbox, { instanceId: 'i-1', now: T0 + 1_000, limit: 50, leaseMs: 120_000 });
    expect(
      details.some((d) => /USING INDEX outbox_due\b/.test(d)),
      details.join('; '),
    ).toBe(true);
    expect(
      details.some((d) => /USING INDEX outbox_job_pending\b/.test(d)),
      details.join('; '),
    ).toBe(true);
    expect(details.filter((d) => fullScan('o').test(d) || fullScan('outbox').test(d))).toEqual([]);
  });

  it('takes over a gone instance’s work through partial indexes, never scanning every job or run', () => {
    const takeOver = { instanceId: 'i-1', timeoutMs: 30_000 };
    const plans = {
      takeOverJobs: plan(q.takeOverJobs, takeOver),
      takeOverRuns: plan(q.takeOverRuns, takeOver),
      releaseDeadJobClaims: plan(q.releaseDeadJobClaims, takeOver),
      releaseDeadOutboxClaims: plan(q.releaseDeadOutboxClaims, takeOver),
    };
    expect(
      plans.takeOverJobs.some((d) => /USING INDEX jobs_interrupted\b/.test(d)),
      plans.takeOverJobs.join('; '),
    ).toBe(true);
    expect(
      plans.takeOverRuns.some((d) => /USING INDEX runs_open\b/.test(d)),
      plans.takeOverRuns.join('; '),
    ).toBe(true);
    expect(plans.releaseDeadJobClaims.some((d) => /USING (COVERING )?INDEX jobs_claimed\b/.test(d))).toBe(
      true,
    );
    expect(
      plans.releaseDeadOutboxClaims.some((d) => /USING (COVERING )?INDEX outbox_claimed\b/.test(d)),
    ).toBe(true);
    for (const details of Object.values(plans))
      expect(details.filter((d) => /^SCAN (jobs|runs|outbox)$/.test(d))).toEqual([]);
  });

  it('finds the thread of a deleted message through runs_open, never scanning every run', () => {
    const details = plan(q.threadOfOpenMessage, { channelId: 'C0CHAN1', messageTs: '1700000000.000001' });
    expect(
      details.some((d) => /USING INDEX runs_open\b/.test(d)),
      details.join('; '),
    ).toBe(true);
    expect(details.filter((d) => /^SCAN (jobs|runs)$/.test(d))).toEqual([]);
  });

  it('finds a follow-up by its run key through runs_key, whether it was recorded with a key or before', () => {
    const details = plan(q.runByKey, { jobId: 7, runKey: '1700000000.000001' });
    expect(
      details.some((d) => /USING INDEX runs_key \(job_id=\? AND <expr>=\?\)/.test(d)),
      details.join('; '),
    ).toBe(true);
  });

  it('finds a job by thread through jobs_thread', () => {
    const details = plan(q.jobByThread, { channelId: 'C0CHAN1', threadTs: '1700000000.000001' });
    expect(
      details.some((d) => /USING INDEX jobs_thread\b/.test(d)),
      details.join('; '),
    ).toBe(true);
    expect(details.filter((d) => fullScan('jobs').test(d))).toEqual([]);
  });

  it('finds due outbox items through outbox_due, and earlier items of a job through outbox_job_pending', () => {
    const details = plan(q.dueOutbox, { now: T0 + 1_000, limit: 50 });
    expect(
      details.some((d) => /^(SEARCH|SCAN) o USING INDEX outbox_due\b/.test(d)),
      details.join('; '),
    ).toBe(true);
    expect(
      details.some((d) => /^SEARCH p USING INDEX outbox_job_pending\b/.test(d)),
      details.join('; '),
    ).toBe(true);
    expect(details.filter((d) => fullScan('o').test(d) || fullScan('p').test(d))).toEqual([]);
  });

  it('answers the store’s own due queries the same way the plans were checked against', async () => {
    // Guards the plan tests above against drifting from what the store actually asks.
    const due = await store.dueJobs(T0 + 1_000, 50);
    expect(due.map((j) => j.triggerKey)).toEqual(
      [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140].map((i) => `plan-${i}`),
    );
    expect((await store.findJobByThread('C0CHAN1', '1700000000.000001'))?.triggerKey).toBe('plan-1');
    const outbox = await store.dueOutbox(T0 + 1_000, 500);
    expect(outbox).toHaveLength(300);
    expect(outbox[0]?.dedupeKey).toBe('plan-0');
  });
});
