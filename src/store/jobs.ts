import { applyChange, applyChanges } from './changes.js';
import { insertJob, insertRun } from './inserts.js';
import { parseAt, parseCount, parseJob, parseRun, parseThread } from './rows.js';
import type { Engine } from './statements.js';
import type { JobsStore, RunsStore } from './types.js';

/**
 * Jobs and their runs, written once for both engines over their {@link Engine}: the reads and
 * moves of one statement each, and the inserts and changes in one transaction each.
 */
export function jobMethods(engine: Engine): JobsStore & RunsStore {
  return {
    insertJob: (job, firstRun, now) => engine.transaction(insertJob(job, firstRun, now)),
    transitionJob: async (jobId, from, to, now) =>
      (await engine.write('transitionJob', { jobId, from, to, now })) === 1,
    getJob: async (jobId) => engine.one('jobById', { jobId }, parseJob),
    findJobByThread: async (channelId, threadTs) =>
      engine.one('jobByThread', { channelId, threadTs }, parseJob),
    threadOfOpenMessage: async (channelId, messageTs) =>
      (await engine.one('threadOfOpenMessage', { channelId, messageTs }, parseThread))?.threadTs,
    apply: (change, now) => engine.transaction(applyChange(change, now)),
    applyAll: (changes, now) => engine.transaction(applyChanges(changes, now)),
    dueJobs: async (now, limit) => engine.many('dueJobs', { now, limit }, parseJob),
    nextDueAt: async (now) => (await engine.one('nextDueAt', { now }, parseAt))?.at ?? undefined,
    recentJobs: async (filter, limit) =>
      'requesterId' in filter
        ? engine.many('recentJobsOfRequester', { requesterId: filter.requesterId, limit }, parseJob)
        : engine.many('recentJobsOfChannel', { channelId: filter.channelId, limit }, parseJob),
    async setRootReaction(jobId, name) {
      await engine.write('setRootReaction', { jobId, name });
    },
    countActiveJobs: async () => (await engine.one('countActiveJobs', {}, parseCount))?.n ?? 0,
    insertFollowUp: (jobId, run, now) => engine.transaction(insertRun(jobId, run, now)),
    claimRun: async (runId, now) => (await engine.write('claimRun', { runId, now })) === 1,
    getRun: async (runId) => engine.one('runById', { runId }, parseRun),
    getRuns: async (jobId) => engine.many('runsOfJob', { jobId }, parseRun),
    pendingRuns: async (jobId) => engine.many('pendingRuns', { jobId }, parseRun),
    readyRuns: async (jobId) => engine.many('readyRuns', { jobId }, parseRun),
  };
}
