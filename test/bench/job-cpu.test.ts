import { describe, expect, it } from 'vitest';
import { pooled } from '../../bench/job-cpu.js';

describe('CPU per job over several rounds', () => {
  it('pools the rounds into CPU per job over all their jobs, with every job and all the time', () => {
    const runs = [
      { cpuMsPerJob: 10, completed: 300, wallMs: 3_000 },
      { cpuMsPerJob: 14, completed: 299, wallMs: 4_000 },
      { cpuMsPerJob: 12.5, completed: 300, wallMs: 3_500 },
    ];
    expect(pooled(runs, 300)).toEqual({ cpuMsPerJob: 12.17, completed: 899, wallMs: 10_500 });
    expect(pooled(runs.slice(0, 1), 300)).toEqual(runs[0]);
  });
});
