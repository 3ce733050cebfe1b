import { describe, expect, it } from 'vitest';
import { jobTitle } from '../../src/blocks/job-title.js';
import { currentRun, isStopped, sessionStatusOf } from '../../src/domain/agent-session.js';
import { JOB_PHASES } from '../../src/domain/phases.js';
import type { RunOutcome } from '../../src/store/types.js';
import { jobRecord } from '../helpers/job-record.js';

describe("a job's agent session status", () => {
  it('is processing while the job starts or the agent works, active while it waits, closed when it cannot go on', () => {
    const statuses = Object.fromEntries(
      JOB_PHASES.map((phase) => [phase, sessionStatusOf(jobRecord({ phase }))]),
    );
    expect(statuses).toEqual({
      accepted: 'processing',
      posting: 'processing',
      creating: 'processing',
      active: 'processing',
      idle: 'active',
      not_started: 'closed',
      start_unknown: 'closed',
      gone: 'closed',
      // The thread belongs to the job that replaced it.
      retried: null,
    });
  });

  it('is closed after a run the job is no longer followed after, and active after any other', () => {
    for (const lastOutcome of ['archived', 'gone', 'stopped_watching'] as RunOutcome[])
      expect(sessionStatusOf(jobRecord({ phase: 'idle', lastOutcome }))).toBe('closed');
    for (const lastOutcome of ['completed_pr', 'completed_no_changes', 'failed'] as RunOutcome[])
      expect(sessionStatusOf(jobRecord({ phase: 'idle', lastOutcome }))).toBe('active');
  });

  it('leaves processing for the run someone pressed stop on, and only that run', () => {
    expect(sessionStatusOf(jobRecord({ phase: 'active', runCount: 2, stoppedRun: 2 }))).toBe('active');
    expect(sessionStatusOf(jobRecord({ phase: 'active', runCount: 3, stoppedRun: 2 }))).toBe('processing');
    // While the job starts, the run being started is the next one.
    const starting = jobRecord({ phase: 'creating', runCount: 0 });
    expect(currentRun(starting)).toBe(1);
    expect(sessionStatusOf({ ...starting, stoppedRun: 1 })).toBe('active');
    expect(sessionStatusOf({ ...starting, stoppedRun: 0 })).toBe('processing');
  });

  it('a stop recorded for a run being given covers it and the runs before it, not a later one', () => {
    // Pressed during run 2 with a reply on its way: recorded for run 3.
    expect(isStopped(3, 2)).toBe(true);
    expect(isStopped(3, 3)).toBe(true);
    expect(isStopped(3, 4)).toBe(false);
    expect(isStopped(null, 1)).toBe(false);
    expect(sessionStatusOf(jobRecord({ phase: 'active', runCount: 2, stoppedRun: 3 }))).toBe('active');
    expect(sessionStatusOf(jobRecord({ phase: 'active', runCount: 4, stoppedRun: 3 }))).toBe('processing');
  });

  it('is none for a job without a thread of its own', () => {
    expect(sessionStatusOf(jobRecord({ threadTs: null }))).toBeNull();
  });
});

describe("a job's title", () => {
  it('is one bounded line of readable plain text, and nothing once erased', () => {
    const job = jobRecord({ instruction: 'Fix <https://x.example|the page>\n\tfor <@U0BOB|bob> &amp; co' });
    expect(jobTitle(job, 80)).toBe('Fix the page (https://x.example) for @bob & co');
    expect(jobTitle(jobRecord({ instruction: 'x'.repeat(200) }), 80)).toHaveLength(80);
    expect(jobTitle({ ...job, erasedAt: 1 }, 80)).toBe('');
  });
});
