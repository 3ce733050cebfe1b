import { parseRun } from './rows.js';
import type { Statements } from './statements.js';
import type { RunsStore } from './types.js';

/** The runs' single-statement methods, written once for both engines over their {@link Statements}. */
export function runMethods(
  run: Pick<Statements, 'one' | 'many' | 'write'>,
): Omit<RunsStore, 'insertFollowUp'> {
  return {
    claimRun: async (runId, now) => (await run.write('claimRun', { runId, now })) === 1,
    getRun: async (runId) => run.one('runById', { runId }, parseRun),
    getRuns: async (jobId) => run.many('runsOfJob', { jobId }, parseRun),
    pendingRuns: async (jobId) => run.many('pendingRuns', { jobId }, parseRun),
    readyRuns: async (jobId) => run.many('readyRuns', { jobId }, parseRun),
  };
}
