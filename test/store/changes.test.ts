import { describe, expect, it } from 'vitest';
import { type Change, changeHolds, readsJob } from '../../src/store/changes.js';

const JOB = { phase: 'active', runCount: 2, owner: 'i-1' };

describe('whether a change still applies', () => {
  it('a change without expectations always applies, even to a job not read', () => {
    expect(changeHolds({ jobId: 1 }, undefined, undefined)).toBe(true);
    expect(readsJob({ jobId: 1, job: { phase: 'idle' } })).toBe(false);
  });

  it('expect: only while the job is in that phase at that run count', () => {
    const change: Change = { jobId: 1, expect: { phase: 'active', runCount: 2 } };
    expect(readsJob(change)).toBe(true);
    expect(changeHolds(change, JOB, undefined)).toBe(true);
    // A follow-up started a new run meanwhile: the late poll answer must not close it.
    expect(changeHolds(change, { ...JOB, runCount: 3 }, undefined)).toBe(false);
    expect(changeHolds(change, { ...JOB, phase: 'idle' }, undefined)).toBe(false);
    expect(changeHolds(change, undefined, undefined)).toBe(false);
  });

  it('expectRun: only while the run is in one of the states, and never for a missing run', () => {
    const change: Change = { jobId: 1, expectRun: { id: 7, states: ['ready', 'pending'] } };
    expect(readsJob(change)).toBe(false);
    expect(changeHolds(change, undefined, { state: 'ready' })).toBe(true);
    expect(changeHolds(change, undefined, { state: 'pending' })).toBe(true);
    // A batch took it to send meanwhile.
    expect(changeHolds(change, undefined, { state: 'sending' })).toBe(false);
    expect(changeHolds(change, undefined, undefined)).toBe(false);
  });

  it('owner of the job: only while that instance still owns it', () => {
    const change: Change = { jobId: 1, owner: { instanceId: 'i-1', job: true } };
    expect(readsJob(change)).toBe(true);
    expect(changeHolds(change, JOB, undefined)).toBe(true);
    expect(changeHolds(change, { ...JOB, owner: 'i-2' }, undefined)).toBe(false);
    expect(changeHolds(change, { ...JOB, owner: null }, undefined)).toBe(false);
    expect(changeHolds(change, undefined, undefined)).toBe(false);
  });

  it('owner of runs: only while it owns every one of them, a missing run counting as not owned', () => {
    const change: Change = { jobId: 1, owner: { instanceId: 'i-1', runIds: [3, 4] } };
    // The job's own owner is not asked unless `job` says so.
    expect(readsJob(change)).toBe(false);
    expect(changeHolds(change, { ...JOB, owner: 'i-2' }, undefined, ['i-1', 'i-1'])).toBe(true);
    expect(changeHolds(change, undefined, undefined, ['i-1', 'i-2'])).toBe(false);
    expect(changeHolds(change, undefined, undefined, ['i-1', null])).toBe(false);
    expect(changeHolds(change, undefined, undefined, ['i-1', undefined])).toBe(false);
  });

  it('every expectation must hold at once', () => {
    const change: Change = {
      jobId: 1,
      expect: { phase: 'active', runCount: 2 },
      expectRun: { id: 7, states: ['ready'] },
      owner: { instanceId: 'i-1', job: true, runIds: [7] },
    };
    expect(changeHolds(change, JOB, { state: 'ready' }, ['i-1'])).toBe(true);
    expect(changeHolds(change, JOB, { state: 'ready' }, ['i-2'])).toBe(false);
    expect(changeHolds(change, JOB, { state: 'sent' }, ['i-1'])).toBe(false);
    expect(changeHolds(change, { ...JOB, owner: 'i-2' }, { state: 'ready' }, ['i-1'])).toBe(false);
  });
});
