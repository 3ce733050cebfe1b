import type pg from 'pg';
import { insertedJob, insertedRun, newJobParams, newRunParams } from '../inserts.js';
import { RehearsalUndone, undone } from '../rehearsal.js';
import { parseId, parseJob, parseRun, parseRunNumber } from '../rows.js';
import type { JobRecord, NewJob, NewOutboxItem, NewRun, RunRecord } from '../types.js';
import { exec, one, type Queryable, write } from './statements.js';

/**
 * Recording a job and its runs on PostgreSQL, with the rules of `Store.insertJob` and
 * `Store.insertFollowUp`: `insertRun` inside the caller's transaction, `insertJobOnce` in its own.
 */
export function postgresInserts(
  transaction: <T>(work: (db: pg.PoolClient) => Promise<T>) => Promise<T>,
  enqueueAll: (db: Queryable, items: NewOutboxItem[], now: number) => Promise<void>,
) {
  async function insertRun(
    db: Queryable,
    jobId: number,
    run: NewRun,
    now: number,
  ): Promise<{ run: RunRecord; created: boolean }> {
    await exec(db, 'lockJobPostgres', { jobId });
    const params = newRunParams(jobId, run, now);
    // A first run (`create`) is recorded with its job, in one transaction: none can precede it.
    const existing =
      run.kind === 'follow_up'
        ? await one(db, 'runByKey', { jobId, runKey: params.runKey }, parseRun)
        : undefined;
    if (existing) return { run: existing, created: false };
    const inserted = await one(db, 'insertRun', params, parseRunNumber);
    if (!inserted) throw new Error(`run of job ${jobId} not recorded`);
    return { run: insertedRun(params, inserted), created: true };
  }

  /** A job recorded before (or in the way), with its first run. */
  const found = async (db: Queryable, existing: JobRecord | undefined, triggerKey: string) => {
    if (!existing) throw new Error(`job ${triggerKey} neither inserted nor found`);
    const run = await one(db, 'firstRunOfJob', { jobId: existing.id }, parseRun);
    if (!run) throw new Error(`job ${existing.id} has no first run`);
    return { job: existing, run, created: false };
  };

  /** Records a job in `db`'s transaction. */
  async function insertJobIn(db: Queryable, job: NewJob, firstRun: NewRun, now: number) {
    const { replaces, triggerKey } = job;
    // A retry moves the job it replaces out of its thread's way first: a concurrent retry
    // waits for the row, then finds it moved, and the retry recorded.
    if (replaces) {
      const { jobId, from, to } = replaces;
      if ((await write(db, 'transitionJob', { jobId, from, to, now })) === 0) {
        const retry = await one(db, 'jobByTrigger', { triggerKey }, parseJob);
        return found(db, retry ?? (await one(db, 'jobById', { jobId }, parseJob)), triggerKey);
      }
    }
    // A thread holds one job: a second start in it returns the job already there.
    let inThread: JobRecord | undefined = job.threadTs
      ? await one(db, 'jobByThread', { channelId: job.channelId, threadTs: job.threadTs }, parseJob)
      : undefined;
    if (inThread && (await write(db, 'detachThread', { jobId: inThread.id, triggerKey })) === 1)
      inThread = undefined;
    const params = newJobParams(job, now);
    const id = inThread ? undefined : (await one(db, 'insertJob', params, parseId))?.id;
    const inserted = id === undefined ? undefined : insertedJob(params, id);
    if (!inserted)
      return found(db, inThread ?? (await one(db, 'jobByTrigger', { triggerKey }, parseJob)), triggerKey);
    const { run } = await insertRun(db, inserted.id, firstRun, now);
    if (!replaces) return { job: inserted, run, created: true };
    await write(db, 'inheritRootReaction', { jobId: inserted.id, replacedId: replaces.jobId });
    await enqueueAll(db, replaces.enqueue, now);
    const current = await one(db, 'jobById', { jobId: inserted.id }, parseJob);
    return { job: current ?? inserted, run, created: true };
  }

  const insertJobOnce = (job: NewJob, firstRun: NewRun, now: number) =>
    transaction((db) => insertJobIn(db, job, firstRun, now));

  /** The insert in a transaction that is rolled back (`Store.rehearseInsert`). */
  const rehearseInsert = (job: NewJob, firstRun: NewRun, now: number) =>
    undone(() =>
      transaction(async (db) => {
        await insertJobIn(db, job, firstRun, now);
        throw new RehearsalUndone();
      }),
    );

  return { insertRun, insertJobOnce, rehearseInsert };
}
