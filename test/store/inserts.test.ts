import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { insertedJob, insertedRun, newJobParams, newRunParams } from '../../src/store/inserts.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createRun, followUp, newJob, post, T0 } from './store-contract.js';

describe('the arguments of a job’s insert', () => {
  it('fills what the caller left out: a command, no project or thread, owned by nobody, private', () => {
    expect(newJobParams(newJob('k1'), T0)).toMatchObject({
      triggerKey: 'k1',
      owner: null,
      origin: 'command',
      projectId: null,
      threadTs: null,
      contextTs: null,
      // Not said where it was asked: treated as private.
      privacy: 'unknown',
      contextChannelId: null,
      now: T0,
    });
  });

  it('keeps what the caller said', () => {
    const said = {
      owner: 'i-1',
      origin: 'mention',
      projectId: 'api-docs',
      threadTs: '1700000000.000100',
      contextTs: '1700000000.000050',
      privacy: 'public',
      contextChannelId: 'C0PANE',
    } as const;
    expect(newJobParams(newJob('k2', said), T0)).toMatchObject(said);
  });

  it('gives a run no owner or workspace unless said', () => {
    expect(newRunParams(4, createRun('Do it'), T0)).toEqual({
      jobId: 4,
      kind: 'create',
      prompt: 'Do it',
      authorId: 'U0ALICE',
      runKey: 'first',
      messageTs: null,
      owner: null,
      teamId: null,
      now: T0,
    });
    expect(newRunParams(4, { ...followUp('1.2'), owner: 'i-2', teamId: 'T0OTHER' }, T0)).toMatchObject({
      owner: 'i-2',
      teamId: 'T0OTHER',
    });
  });

  it('keys a run by its message, or by the key of the source it was given', () => {
    expect(newRunParams(4, followUp('1.2'), T0).runKey).toBe('1.2');
    const modal = { ...createRun(), kind: 'follow_up' as const, runKey: 'modal:V0FIX' };
    expect(newRunParams(4, modal, T0)).toMatchObject({ runKey: 'modal:V0FIX', messageTs: null });
  });
});

describe('the rows an insert wrote, built without reading them back', () => {
  let store: ReturnType<typeof openSqliteStore>;
  beforeEach(() => {
    store = openSqliteStore(':memory:');
  });
  afterEach(async () => {
    await store.close();
  });

  it('equal the rows read back, for a bare job and for one with every optional field', async () => {
    const jobs = [
      newJob('bare'),
      newJob('full', {
        owner: 'i-1',
        origin: 'shortcut',
        projectId: 'api-docs',
        threadTs: '1700000000.000200',
        contextTs: '1700000000.000150',
        privacy: 'pane',
        contextChannelId: 'C0PANE',
      }),
    ];
    for (const [i, job] of jobs.entries()) {
      const { job: recorded } = await store.insertJob(job, createRun(), T0 + i);
      const built = insertedJob(newJobParams(job, T0 + i), recorded.id);
      expect(built).toEqual(await store.getJob(recorded.id));
    }
  });

  it('equal the run read back, a follow-up numbered after the first run', async () => {
    const { job } = await store.insertJob(newJob('runs'), createRun(), T0);
    const reply = { ...followUp('1700000000.000300'), teamId: 'T0OTHER' };
    const { run } = await store.insertFollowUp(job.id, reply, T0 + 1);
    const read = (await store.getRuns(job.id)).find((r) => r.id === run.id);
    expect(read).toMatchObject({ seq: 2, state: 'pending', teamId: 'T0OTHER' });
    expect(insertedRun(newRunParams(job.id, reply, T0 + 1), { id: run.id, seq: 2 })).toEqual(read);
  });
});

const THREAD = '1700000000.000100';
type SqliteStore = ReturnType<typeof openSqliteStore>;
const count = (store: SqliteStore, table: string) =>
  (store.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

describe('recording jobs on SQLite', () => {
  let store: SqliteStore;
  beforeEach(() => {
    store = openSqliteStore(':memory:');
  });
  afterEach(async () => {
    await store.close();
  });

  it('records a repeated trigger key once, answering with the first job and its first run', async () => {
    const first = await store.insertJob(newJob('k1'), createRun('First'), T0);
    const again = await store.insertJob(
      newJob('k1', { instruction: 'Other words' }),
      createRun('Again'),
      T0 + 1,
    );
    expect(first.created).toBe(true);
    expect(again).toEqual({ job: await store.getJob(first.job.id), run: first.run, created: false });
    expect(again.job.instruction).toBe(first.job.instruction);
    expect([count(store, 'jobs'), count(store, 'runs')]).toEqual([1, 1]);
  });

  it('records a repeated trigger key once when the commands arrive in one burst', async () => {
    const results = await Promise.all([1, 2, 3].map(() => store.insertJob(newJob('burst'), createRun(), T0)));
    expect(results.map((r) => r.created)).toEqual([true, false, false]);
    expect(new Set(results.map((r) => r.job.id)).size).toBe(1);
    expect(new Set(results.map((r) => r.run.id)).size).toBe(1);
  });

  it('keeps one job per thread: a second start there answers with the job already in it', async () => {
    const first = await store.insertJob(newJob('a', { threadTs: THREAD }), createRun(), T0);
    const second = await store.insertJob(newJob('b', { threadTs: THREAD }), createRun(), T0 + 1);
    expect(second).toMatchObject({ created: false, job: { id: first.job.id, triggerKey: 'a' } });
    expect(count(store, 'jobs')).toBe(1);
  });

  it('gives a thread to a new start once its job never started, and keeps a repeated start in its own', async () => {
    const first = await store.insertJob(newJob('a', { threadTs: THREAD }), createRun(), T0);
    await store.transitionJob(first.job.id, 'accepted', 'not_started', T0);
    // The same start seen again stays in its own thread.
    expect((await store.insertJob(newJob('a', { threadTs: THREAD }), createRun(), T0)).created).toBe(false);
    const second = await store.insertJob(newJob('b', { threadTs: THREAD }), createRun(), T0 + 1);
    expect(second.created).toBe(true);
    expect((await store.findJobByThread('C0DOCS', THREAD))?.id).toBe(second.job.id);
    expect((await store.getJob(first.job.id))?.threadTs).toBeNull();
  });

  it('a retry moves the job it replaces aside, takes its emoji and enqueues with it; a second retry finds the first', async () => {
    const old = await store.insertJob(newJob('old', { threadTs: THREAD }), createRun(), T0);
    await store.apply({ jobId: old.job.id, job: { phase: 'gone' } }, T0);
    await store.setRootReaction(old.job.id, 'x');
    const retry = (n: number) =>
      store.insertJob(
        newJob('retry-of-old', {
          threadTs: THREAD,
          replaces: {
            jobId: old.job.id,
            from: 'gone',
            to: 'retried',
            enqueue: [{ jobId: old.job.id, dedupeKey: `retried-${n}`, payload: post('Tried again') }],
          },
        }),
        createRun(),
        T0 + n,
      );
    const first = await retry(1);
    expect(first).toMatchObject({ created: true, job: { rootReaction: 'x', threadTs: THREAD } });
    expect((await store.getJob(old.job.id))?.phase).toBe('retried');
    const second = await retry(2);
    expect(second).toMatchObject({ created: false, job: { id: first.job.id } });
    expect((await store.dueOutbox(T0 + 10, 10)).map((i) => i.dedupeKey)).toEqual(['retried-1']);
  });

  it('records a re-delivered reply once, and numbers replies in order', async () => {
    const { job } = await store.insertJob(newJob('replies'), createRun(), T0);
    const a = await store.insertFollowUp(job.id, followUp('1.1'), T0 + 1);
    const again = await store.insertFollowUp(job.id, followUp('1.1', 'edited words'), T0 + 2);
    const b = await store.insertFollowUp(job.id, followUp('1.2'), T0 + 3);
    expect([a.created, again.created, b.created]).toEqual([true, false, true]);
    expect(again.run).toEqual(a.run);
    expect((await store.getRuns(job.id)).map((r) => [r.seq, r.messageTs])).toEqual([
      [1, null],
      [2, '1.1'],
      [3, '1.2'],
    ]);
  });

  it('a rehearsed insert leaves nothing behind, and a failed one undoes itself', async () => {
    await store.rehearseInsert(newJob('rehearsed', { threadTs: THREAD }), createRun(), T0);
    expect([count(store, 'jobs'), count(store, 'runs')]).toEqual([0, 0]);
    await expect(store.insertFollowUp(999, followUp('1.1'), T0)).rejects.toThrow(/FOREIGN KEY/);
    expect(count(store, 'runs')).toBe(0);
  });
});

describe('recording jobs on SQLite from two connections to one file', () => {
  let dir: string;
  const stores: SqliteStore[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'docs-agent-insert-'));
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records a trigger key once, whichever connection sees it again', async () => {
    // One process uses the file; a second connection stands for the next run of it.
    const path = join(dir, 'store.sqlite');
    stores.push(openSqliteStore(path), openSqliteStore(path));
    const [a, b] = stores as [SqliteStore, SqliteStore];
    const first = await a.insertJob(newJob('shared'), createRun(), T0);
    const again = await b.insertJob(newJob('shared'), createRun(), T0 + 1);
    expect([first.created, again.created]).toEqual([true, false]);
    expect(again.job.id).toBe(first.job.id);
    expect(again.run.id).toBe(first.run.id);
    expect(count(a, 'jobs')).toBe(1);
  });
});
