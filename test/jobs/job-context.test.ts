import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { readConfig } from '../../src/config/config.js';
import { createJobContext, leasesFor, outboxWrites, requesterTarget } from '../../src/jobs/job-context.js';
import { noMetrics } from '../../src/jobs/metrics-hooks.js';
import type { NewOutboxItem } from '../../src/store/types.js';
import { VALID_ENV } from '../helpers/config.js';
import { jobRecord } from '../helpers/job-record.js';
import { CHANNEL, createJobWorld, type JobWorld, REQUESTER } from '../helpers/job-world.js';

let w: JobWorld;
beforeEach(() => {
  w = createJobWorld();
});
afterEach(async () => {
  await w.store.close();
});

const note = (jobId: number, key: string): NewOutboxItem => ({
  jobId,
  dedupeKey: key,
  payload: { type: 'ephemeral', channel: CHANNEL, user: REQUESTER, threadTs: null, text: 'A note' },
});

describe('outboxWrites', () => {
  it('applyQueued: writes the change with its items, then wakes the outbox', async () => {
    const outbox = { kick: vi.fn() };
    const writes = outboxWrites(w.store, outbox);
    const { job } = await w.insertJob();
    const applied = await writes.applyQueued(
      { jobId: job.id, expect: { phase: job.phase, runCount: job.runCount }, enqueue: [note(job.id, 'k:1')] },
      w.clock.at,
    );
    expect(applied).toBe(true);
    expect(w.outboxKeys()).toEqual(['k:1']);
    expect(outbox.kick).toHaveBeenCalledOnce();
  });

  it('applyQueued: a change whose expectation did not hold queues nothing and wakes nothing', async () => {
    const outbox = { kick: vi.fn() };
    const writes = outboxWrites(w.store, outbox);
    const { job } = await w.insertJob();
    const applied = await writes.applyQueued(
      { jobId: job.id, expect: { phase: 'active', runCount: job.runCount }, enqueue: [note(job.id, 'k:1')] },
      w.clock.at,
    );
    expect(applied).toBe(false);
    expect(w.outbox()).toEqual([]);
    expect(outbox.kick).not.toHaveBeenCalled();
  });

  it('enqueue: queues the items, then wakes the outbox', async () => {
    const outbox = { kick: vi.fn() };
    const { job } = await w.insertJob();
    await outboxWrites(w.store, outbox).enqueue([note(job.id, 'k:1'), note(job.id, 'k:2')], w.clock.at);
    expect(w.outboxKeys()).toEqual(['k:1', 'k:2']);
    expect(outbox.kick).toHaveBeenCalledOnce();
  });

  it('a write that fails wakes nothing and the error reaches the caller', async () => {
    const outbox = { kick: vi.fn() };
    const failing = {
      apply: vi.fn(async () => Promise.reject(new Error('database is locked'))),
      enqueue: vi.fn(async () => Promise.reject(new Error('database is locked'))),
    };
    const writes = outboxWrites(failing, outbox);
    await expect(writes.applyQueued({ jobId: 1 }, w.clock.at)).rejects.toThrow('database is locked');
    await expect(writes.enqueue([note(1, 'k:1')], w.clock.at)).rejects.toThrow('database is locked');
    expect(outbox.kick).not.toHaveBeenCalled();
  });
});

describe('createJobContext', () => {
  it('wakes the outbox it was given, never the poller, for what the flows queue', async () => {
    const ctx = createJobContext(w.deps);
    const { job } = await w.insertJob();
    await ctx.enqueue([note(job.id, 'k:1')], w.clock.at);
    await ctx.applyQueued({ jobId: job.id, enqueue: [note(job.id, 'k:2')] }, w.clock.at);
    expect(w.deps.loops.outbox.kick).toHaveBeenCalledTimes(2);
    expect(w.deps.loops.poller.kick).not.toHaveBeenCalled();
    expect(w.outboxKeys()).toEqual(['k:1', 'k:2']);
  });

  it('fills in the defaults: no metrics, the wall clock, the monotonic clock', () => {
    const { metrics: _m, now: _n, monotonic: _mono, ...bare } = w.deps;
    const ctx = createJobContext(bare);
    expect(ctx.metrics).toBe(noMetrics);
    const before = Date.now();
    const at = ctx.now();
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
    const m = ctx.monotonic();
    expect(Math.abs(m - performance.now())).toBeLessThan(1_000);
  });

  it('keeps the clocks and metrics it is given', () => {
    const metrics = { instruction: vi.fn(), runFinished: vi.fn(), feedback: vi.fn() };
    const ctx = createJobContext({ ...w.deps, metrics, monotonic: () => 42 });
    expect(ctx.metrics).toBe(metrics);
    expect(ctx.now()).toBe(w.clock.at);
    expect(ctx.monotonic()).toBe(42);
    expect(ctx.store).toBe(w.store);
    expect(ctx.instanceId).toBe(w.deps.instanceId);
  });
});

describe('requesterTarget', () => {
  it('answers a command’s requester outside any thread (the thread may not exist yet), through its response_url', () => {
    const job = jobRecord({ origin: 'command', responseUrl: 'https://hooks.slack.test/commands/1' });
    expect(requesterTarget(job)).toEqual({
      channelId: job.channelId,
      userId: job.requesterId,
      threadTs: null,
      responseUrl: 'https://hooks.slack.test/commands/1',
    });
  });

  it('answers a job started inside a conversation in its thread', () => {
    for (const origin of ['mention', 'direct', 'shortcut'] as const) {
      const job = jobRecord({ origin, threadTs: '1700000000.000200' });
      expect(requesterTarget(job)).toMatchObject({ userId: job.requesterId, threadTs: '1700000000.000200' });
    }
  });
});

const timeoutOf = (env: Record<string, string> = {}) => readConfig({ ...VALID_ENV, ...env }).agent.timeoutMs;

describe('leasesFor', () => {
  it('with the default agent API time-out (6 s), gives the leases that follow from it', () => {
    const leases = leasesFor(timeoutOf());
    expect(leases).toEqual({
      // 3 POST attempts of 6 s, backoffs of at most 600 and 1,200 ms, two Retry-Afters of 5 s; a quarter more.
      agentWrite: { callMs: 29_800, leaseMs: 37_250 },
      // 4 GET attempts of 6 s, backoffs of at most 500, 1,000 and 2,000 ms, three Retry-Afters of 10 s.
      agentRead: { callMs: 57_500, leaseMs: 71_875 },
      // One Slack call of at most 10 s.
      delivery: { callMs: 10_000, leaseMs: 12_500 },
    });
  });

  it('follows DOCS_AGENT_API_TIMEOUT_MS: every attempt may take the whole time-out', () => {
    const leases = leasesFor(timeoutOf({ DOCS_AGENT_API_TIMEOUT_MS: '30000' }));
    expect(leases.agentWrite).toEqual({ callMs: 3 * 30_000 + 11_800, leaseMs: 127_250 });
    expect(leases.agentRead).toEqual({ callMs: 4 * 30_000 + 33_500, leaseMs: 191_875 });
  });

  it('keeps the delivery lease apart from the agent API: Slack calls have their own time-out', () => {
    expect(leasesFor(100).delivery).toEqual(leasesFor(120_000).delivery);
  });

  it('always leaves a margin of at least 2 s between the claim and the call it guards', () => {
    for (const timeout of [100, 6_000, 120_000]) {
      for (const lease of Object.values(leasesFor(timeout))) {
        expect(lease.leaseMs - lease.callMs).toBeGreaterThanOrEqual(2_000);
        expect(lease.leaseMs).toBeGreaterThanOrEqual(lease.callMs * 1.25);
      }
    }
  });

  it('claims a poll for longer than a write: reads are retried more often and wait out longer Retry-Afters', () => {
    const { agentRead, agentWrite } = leasesFor(6_000);
    expect(agentRead.callMs).toBeGreaterThan(agentWrite.callMs);
  });
});
