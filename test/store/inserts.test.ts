import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { insertedJob, insertedRun, newJobParams, newRunParams } from '../../src/store/inserts.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createRun, followUp, newJob, T0 } from './store-contract.js';

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
