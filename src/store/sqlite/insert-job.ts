import { insertedJob, insertedRun, newJobParams, newRunParams } from '../inserts.js';
import type { Params } from '../queries/named.js';
import type { QueryName } from '../queries.js';
import { parseId, parseJob, parseRun, parseRunNumber, type Row } from '../rows.js';
import type { JobRecord, NewJob, NewOutboxItem, NewRun, RunRecord } from '../types.js';

/** The SQLite store's statement helpers the inserts run on (inside the caller's transaction). */
export interface SqliteStatements {
  one: <T>(name: QueryName, params: Params, parse: (row: Row) => T) => T | undefined;
  write: (name: QueryName, params: Params) => number;
  enqueueAll: (items: NewOutboxItem[], now: number) => void;
}

/**
 * Recording a job and its runs, with the rules of `Store.insertJob` and `Store.insertFollowUp`.
 * Synchronous: the caller wraps each in one immediate transaction.
 */
export function sqliteInserts({ one, write, enqueueAll }: SqliteStatements) {
  const insertRun = (jobId: number, run: NewRun, now: number): { run: RunRecord; created: boolean } => {
    const params = newRunParams(jobId, run, now);
    // A first run (`create`) is recorded with its job, in one transaction: none can precede it.
    const existing =
      run.kind === 'follow_up' ? one('runByKey', { jobId, runKey: params.runKey }, parseRun) : undefined;
    if (existing) return { run: existing, created: false };
    const inserted = one('insertRun', params, parseRunNumber);
    if (!inserted) throw new Error(`run of job ${jobId} not recorded`);
    return { run: insertedRun(params, inserted), created: true };
  };

  /** A job recorded before (or in the way), with its first run. */
  const found = (existing: JobRecord | undefined, triggerKey: string) => {
    if (!existing) throw new Error(`job ${triggerKey} neither inserted nor found`);
    const run = one('firstRunOfJob', { jobId: existing.id }, parseRun);
    if (!run) throw new Error(`job ${existing.id} has no first run`);
    return { job: existing, run, created: false };
  };

  const insertJob = (job: NewJob, firstRun: NewRun, now: number) => {
    const { replaces, triggerKey } = job;
    // A retry moves the job it replaces out of its thread's way first: only one retry gets to.
    if (replaces) {
      const { jobId, from, to } = replaces;
      if (write('transitionJob', { jobId, from, to, now }) === 0)
        return found(
          one('jobByTrigger', { triggerKey }, parseJob) ?? one('jobById', { jobId }, parseJob),
          triggerKey,
        );
    }
    // A thread holds one job: a second start in it returns the job already there.
    let inThread = job.threadTs
      ? one('jobByThread', { channelId: job.channelId, threadTs: job.threadTs }, parseJob)
      : undefined;
    if (inThread && write('detachThread', { jobId: inThread.id, triggerKey }) === 1) inThread = undefined;
    const params = newJobParams(job, now);
    const id = inThread ? undefined : one('insertJob', params, parseId)?.id;
    const inserted = id === undefined ? undefined : insertedJob(params, id);
    if (!inserted) return found(inThread ?? one('jobByTrigger', { triggerKey }, parseJob), triggerKey);
    const { run } = insertRun(inserted.id, firstRun, now);
    if (!replaces) return { job: inserted, run, created: true };
    write('inheritRootReaction', { jobId: inserted.id, replacedId: replaces.jobId });
    enqueueAll(replaces.enqueue, now);
    return { job: one('jobById', { jobId: inserted.id }, parseJob) ?? inserted, run, created: true };
  };

  return { insertRun, insertJob };
}
