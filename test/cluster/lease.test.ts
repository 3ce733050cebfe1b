import { describe, expect, it } from 'vitest';
import { leasesFor, longestAgentCallMs, postPolicy } from '../../src/agent/retry-policies.js';
import { RenewalTooSlowError, readyForCall } from '../../src/cluster/lease.js';

describe('leases derived from the configuration', () => {
  it('cover every attempt of an agent API POST, the backoff and Retry-After between them, and a margin', () => {
    // 3 attempts of 6 s; backoffs of at most 600 and 1,200 ms; Retry-After of at most 5 s twice.
    expect(longestAgentCallMs(6_000, postPolicy, 5_000)).toBe(18_000 + 600 + 1_200 + 10_000);
    const { agentWrite, agentRead, delivery } = leasesFor(6_000);
    expect(agentWrite.callMs).toBe(29_800);
    expect(agentWrite.leaseMs).toBeGreaterThan(agentWrite.callMs);
    expect(agentRead.callMs).toBeGreaterThan(4 * 6_000);
    expect(delivery.leaseMs).toBeGreaterThan(delivery.callMs);
  });

  it('grow with the agent API time-out: a slower API gets a longer lease', () => {
    expect(leasesFor(60_000).agentWrite.leaseMs).toBeGreaterThan(
      leasesFor(6_000).agentWrite.leaseMs + 100_000,
    );
  });
});

describe('readyForCall', () => {
  const lease = { callMs: 1_000, leaseMs: 1_500 };

  it('uses a fresh claim without asking the store again', async () => {
    let renewals = 0;
    const clock = { at: 100 };
    const ready = await readyForCall(
      lease,
      async () => ++renewals > 0,
      0,
      () => clock.at,
    );
    expect([ready, renewals]).toEqual([true, 0]);
  });

  it('renews a claim that may run out before the call ends, and refuses when the work was taken over', async () => {
    const clock = { at: 10_000 };
    let renewals = 0;
    expect(
      await readyForCall(
        lease,
        async () => ++renewals > 0,
        0,
        () => clock.at,
      ),
    ).toBe(true);
    expect(renewals).toBe(1);
    expect(
      await readyForCall(
        lease,
        async () => false,
        0,
        () => clock.at,
      ),
    ).toBe(false);
  });

  it('gives up when the store renews too slowly for any call to start inside the lease', async () => {
    const clock = { at: 0 };
    const slow = async () => {
      clock.at += 600;
      return true;
    };
    await expect(readyForCall(lease, slow, undefined, () => clock.at)).rejects.toThrow(RenewalTooSlowError);
  });
});
