import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AgentInvalidResponseError,
  AgentOutcomeUnknownError,
  AgentResponseTooLargeError,
  AgentUnauthorizedError,
  AgentUnavailableError,
} from '../../src/agent/errors.js';
import {
  errorMessage,
  fromAgentJob,
  isUnknownOutcome,
  logAgentError,
  outcomeOf,
  RECORD_ATTEMPTS,
  recordAgentAnswer,
  startedPatch,
} from '../../src/jobs/agent-outcomes.js';
import { createLogger } from '../../src/logging/logger.js';
import { agentJob } from '../helpers/fake-network.js';

const PR = 'https://github.com/acme/docs/pull/12';

function logged() {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', secrets: [], write: (l) => lines.push(l) });
  return { logger, lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('fromAgentJob', () => {
  it('takes the status, pull request, source and model the agent reported', () => {
    const job = agentJob({
      status: 'completed',
      prLink: PR,
      source: { repository: 'acme/docs', ref: 'main' },
      model: 'm-1',
    });
    expect(fromAgentJob(job)).toEqual({
      agentStatus: 'completed',
      prLink: PR,
      repository: 'acme/docs',
      ref: 'main',
      model: 'm-1',
    });
  });

  it('never overwrites what is known with what the agent left out', () => {
    expect(fromAgentJob(agentJob({ status: 'active' }))).toEqual({ agentStatus: 'active' });
  });
});

describe('outcomeOf', () => {
  it('tells a completed run with a pull request from one without changes', () => {
    expect(outcomeOf(agentJob({ status: 'completed', prLink: PR }))).toBe('completed_pr');
    expect(outcomeOf(agentJob({ status: 'completed' }))).toBe('completed_no_changes');
  });

  it('maps failed and archived, and leaves a job still working without an outcome', () => {
    expect(outcomeOf(agentJob({ status: 'failed', prLink: PR }))).toBe('failed');
    expect(outcomeOf(agentJob({ status: 'archived' }))).toBe('archived');
    for (const status of ['active', 'queued', 'unknown', 'something_new'])
      expect(outcomeOf(agentJob({ status }))).toBeUndefined();
  });
});

describe('isUnknownOutcome and errorMessage', () => {
  it('treats a request sent without a usable answer as of unknown outcome, and nothing else', () => {
    expect(isUnknownOutcome(new AgentOutcomeUnknownError('timed out'))).toBe(true);
    expect(isUnknownOutcome(new AgentInvalidResponseError('not a job'))).toBe(true);
    expect(isUnknownOutcome(new AgentResponseTooLargeError('too big', { limitBytes: 1 }))).toBe(true);
    expect(isUnknownOutcome(new AgentUnavailableError('refused'))).toBe(false);
    expect(isUnknownOutcome(new AgentUnauthorizedError('401'))).toBe(false);
    expect(isUnknownOutcome(new Error('other'))).toBe(false);
  });

  it('reads a message from anything thrown', () => {
    expect(errorMessage(new Error('boom'))).toBe('boom');
    expect(errorMessage('plain')).toBe('plain');
    expect(errorMessage(undefined)).toBe('undefined');
  });
});

describe('startedPatch', () => {
  it('makes the job active, polled one interval from the start, with the last run’s traces cleared', () => {
    const at = 1_700_000_000_000;
    expect(startedPatch('creating', agentJob({ status: 'queued', model: 'm-1' }), at, 15_000)).toEqual({
      agentStatus: 'queued',
      model: 'm-1',
      phase: 'active',
      lastOutcome: null,
      runStartedAt: at,
      nextPollAt: at + 15_000,
      pollIntervalMs: 15_000,
      pollFailures: 0,
      pollRefusals: 0,
      lastError: null,
    });
  });

  it('is allowed from an idle job taking a follow-up', () => {
    expect(startedPatch('idle', agentJob(), 0, 1_000).phase).toBe('active');
  });
});

describe('logAgentError', () => {
  it('logs a refused admin key as an error naming what to renew, other failures as warnings', () => {
    const { logger, parsed } = logged();
    logAgentError(logger, new AgentUnauthorizedError('401'), { jobId: 3 });
    logAgentError(logger, new AgentUnavailableError('503'), { jobId: 4 });
    const [refused, failed] = parsed();
    expect(refused).toMatchObject({ level: 'error', jobId: 3 });
    expect(String(refused?.msg)).toContain('DOCS_AGENT_API_KEY');
    expect(failed).toMatchObject({ level: 'warn', jobId: 4 });
  });
});

describe('recordAgentAnswer', () => {
  it('returns the write’s answer at once when the store takes it', async () => {
    const { logger, lines } = logged();
    const write = vi.fn(async () => 'recorded');
    expect(await recordAgentAnswer(write, logger)).toBe('recorded');
    expect(write).toHaveBeenCalledOnce();
    expect(lines).toEqual([]);
  });

  it('tries again after 200, 600 and 1,800 ms, then lets the store’s error through', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { logger, parsed } = logged();
    const write = vi.fn(async () => Promise.reject(new Error('database is locked')));
    let error: unknown;
    const done = recordAgentAnswer(write, logger).catch((e: unknown) => {
      error = e;
    });
    const callsAfter = async (ms: number) => {
      await vi.advanceTimersByTimeAsync(ms);
      return write.mock.calls.length;
    };
    expect(await callsAfter(0)).toBe(1);
    expect(await callsAfter(199)).toBe(1);
    expect(await callsAfter(1)).toBe(2);
    expect(await callsAfter(599)).toBe(2);
    expect(await callsAfter(1)).toBe(3);
    expect(await callsAfter(1_799)).toBe(3);
    expect(await callsAfter(1)).toBe(RECORD_ATTEMPTS);
    await done;
    expect((error as Error).message).toBe('database is locked');
    expect(parsed().map((l) => l.attempt)).toEqual([1, 2, 3]);
  });

  it('stops retrying once a write lands', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { logger } = logged();
    const write = vi.fn().mockRejectedValueOnce(new Error('busy')).mockResolvedValueOnce(true);
    const done = recordAgentAnswer(write, logger);
    await vi.advanceTimersByTimeAsync(200);
    expect(await done).toBe(true);
    expect(write).toHaveBeenCalledTimes(2);
  });
});
