import { parseAt, parseCount, parseJob, parseThread } from './rows.js';
import type { Statements } from './statements.js';
import type { JobsStore } from './types.js';

/** The jobs' methods that are one statement each; inserts and changes stay with each engine's transactions. */
type Methods = Omit<JobsStore, 'insertJob' | 'apply' | 'applyAll'>;

/** The jobs' single-statement methods, written once for both engines over their {@link Statements}. */
export function jobMethods(run: Pick<Statements, 'one' | 'many' | 'write'>): Methods {
  return {
    transitionJob: async (jobId, from, to, now) =>
      (await run.write('transitionJob', { jobId, from, to, now })) === 1,
    getJob: async (jobId) => run.one('jobById', { jobId }, parseJob),
    findJobByThread: async (channelId, threadTs) => run.one('jobByThread', { channelId, threadTs }, parseJob),
    threadOfOpenMessage: async (channelId, messageTs) =>
      (await run.one('threadOfOpenMessage', { channelId, messageTs }, parseThread))?.threadTs,
    dueJobs: async (now, limit) => run.many('dueJobs', { now, limit }, parseJob),
    nextDueAt: async (now) => (await run.one('nextDueAt', { now }, parseAt))?.at ?? undefined,
    recentJobs: async (filter, limit) =>
      'requesterId' in filter
        ? run.many('recentJobsOfRequester', { requesterId: filter.requesterId, limit }, parseJob)
        : run.many('recentJobsOfChannel', { channelId: filter.channelId, limit }, parseJob),
    async setRootReaction(jobId, name) {
      await run.write('setRootReaction', { jobId, name });
    },
    countActiveJobs: async () => (await run.one('countActiveJobs', {}, parseCount))?.n ?? 0,
  };
}
