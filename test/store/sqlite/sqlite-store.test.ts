import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { queriesFor } from '../../../src/store/queries.js';
import {
  migrate,
  migrations,
  openSqliteStore,
  preparePrivateFile,
} from '../../../src/store/sqlite/sqlite-store.js';
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

  it('reads each row by the columns its table has now, when another process changes the table', async () => {
    const store = open();
    const { job } = await store.insertJob(newJob('widths'), createRun(), T0);
    const before = await store.getJob(job.id);
    const other = new Database(file.path);
    try {
      // A later release's migration, run beside this one: its column is passed over.
      other.exec("ALTER TABLE jobs ADD COLUMN later_note TEXT NOT NULL DEFAULT 'a later release'");
      expect(await store.getJob(job.id)).toEqual(before);
      // A column this release needs, gone: refused by its name, never read as its neighbour's.
      other.exec('ALTER TABLE jobs DROP COLUMN root_reaction');
      await expect(store.getJob(job.id)).rejects.toThrow(/rootReaction/);
    } finally {
      other.close();
    }
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

/** Permission bits of a file or folder. */
const mode = (at: string) => statSync(at).mode & 0o777;
const migrationRows = (db: Database.Database) =>
  db.prepare('SELECT version, applied_at FROM schema_migrations ORDER BY version').all() as Array<{
    version: number;
    applied_at: number;
  }>;

describe('the SQLite database file', () => {
  const file = storeFileEachTest();
  const { open } = file;

  it('creates missing directories and opens the database in WAL mode', async () => {
    expect(existsSync(join(file.dir, 'nested'))).toBe(false);
    const store = open();
    expect(existsSync(file.path)).toBe(true);
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(store.db.pragma('busy_timeout', { simple: true })).toBe(5000);
    // NORMAL
    expect(store.db.pragma('synchronous', { simple: true })).toBe(1);
  });

  it('keeps the store private to the app’s user whatever the umask: folders it creates 0700, the file, -wal and -shm 0600', async () => {
    const previous = process.umask(0o022);
    try {
      const store = open();
      await store.insertJob(newJob('private'), createRun(), T0);
      expect(mode(join(file.dir, 'nested'))).toBe(0o700);
      expect(mode(join(file.dir, 'nested', 'deeper'))).toBe(0o700);
      expect(mode(file.path)).toBe(0o600);
      expect(mode(`${file.path}-wal`)).toBe(0o600);
      expect(mode(`${file.path}-shm`)).toBe(0o600);
    } finally {
      process.umask(previous);
    }
  });

  it('makes an existing store file private, and leaves an existing folder (maybe the working directory) alone', async () => {
    mkdirSync(dirname(file.path), { recursive: true });
    chmodSync(dirname(file.path), 0o755);
    writeFileSync(file.path, '');
    chmodSync(file.path, 0o644);
    const store = open();
    await store.insertJob(newJob('existing'), createRun(), T0);
    expect(mode(file.path)).toBe(0o600);
    expect(mode(`${file.path}-wal`)).toBe(0o600);
    expect(mode(dirname(file.path))).toBe(0o755);
  });

  it('records each migration once and does not re-apply it on reopen', async () => {
    const first = open();
    const applied = migrationRows(first.db);
    expect(applied.map((r) => r.version)).toEqual(migrations.map((m) => m.version));
    expect(applied.length).toBeGreaterThan(0);
    for (const row of applied) expect(typeof row.applied_at).toBe('number');
    await first.insertJob(newJob('survives-migrate'), createRun(), T0);
    await first.close();

    const second = open();
    expect(migrationRows(second.db)).toEqual(applied);
    // Running the migrations again by hand is a no-op too.
    migrate(second.db);
    expect(migrationRows(second.db)).toEqual(applied);
    expect((await second.takeOverOrphans('i-test', Date.now())).jobs.map((j) => j.triggerKey)).toEqual([
      'survives-migrate',
    ]);
    const tables = second.db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all()
      .map((r) => (r as { name: string }).name);
    expect(tables).toEqual([
      'assistant_threads',
      'feedback_votes',
      'home_views',
      'instances',
      'jobs',
      'outbox',
      'pull_requests',
      'runs',
      'schema_migrations',
      'slack_pauses',
    ]);
  });

  it('is prepared private before SQLite opens it, without touching what is in it', () => {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, 'kept');
    writeFileSync(`${file.path}-wal`, '');
    chmodSync(file.path, 0o666);
    chmodSync(`${file.path}-wal`, 0o644);
    preparePrivateFile(file.path);
    expect(mode(file.path)).toBe(0o600);
    expect(mode(`${file.path}-wal`)).toBe(0o600);
    expect(existsSync(`${file.path}-shm`)).toBe(false);
    expect(statSync(file.path).size).toBe(4);
  });

  it('names the path when the store cannot be created there', () => {
    const aFile = join(file.dir, 'a-file');
    writeFileSync(aFile, 'not a folder');
    expect(() => openSqliteStore(join(aFile, 'store.sqlite'))).toThrow(aFile);
    // A folder given as the store's file.
    expect(() => openSqliteStore(file.dir)).toThrow(file.dir);
  });
});

/** A store left at version 10 (before the unused number 11), each migration recorded at `T0`. */
function storeAtVersion10(): Database.Database {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  for (const m of migrations.filter((m) => m.version <= 10)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(m.version, T0);
  }
  return db;
}

describe('SQLite migrations', () => {
  it('bring a store left at an earlier version up to the last, across the unused number', () => {
    const db = storeAtVersion10();
    try {
      migrate(db);
      const rows = migrationRows(db);
      expect(rows.map((r) => r.version)).toEqual(migrations.map((m) => m.version));
      // Only what was missing ran now.
      expect(rows.filter((r) => r.applied_at !== T0).map((r) => r.version)).toEqual(
        migrations.filter((m) => m.version > 10).map((m) => m.version),
      );
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'feedback_votes'").get()).toBeDefined();
      // Jobs watched before the refused polls were counted apart start from none.
      const refusals = (db.prepare('PRAGMA table_info(jobs)').all() as { name: string }[]).find(
        (c) => c.name === 'poll_refusals',
      );
      expect(refusals).toMatchObject({ type: 'INTEGER', notnull: 1, dflt_value: '0' });
    } finally {
      db.close();
    }
  });

  it('leave nothing of a migration that fails, and record no version for it', () => {
    const db = storeAtVersion10();
    try {
      // In the way of version 12's table, after its first statement has run.
      db.exec('CREATE TABLE feedback_votes (x INTEGER)');
      expect(() => migrate(db)).toThrow(/feedback_votes already exists/);
      expect(Math.max(...migrationRows(db).map((r) => r.version))).toBe(10);
      const columns = (db.prepare('PRAGMA table_info(jobs)').all() as { name: string }[]).map((c) => c.name);
      expect(columns).not.toContain('stopped_run');
      // Nor did any migration after it run.
      expect(columns).not.toContain('poll_refusals');
    } finally {
      db.close();
    }
  });
});

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
