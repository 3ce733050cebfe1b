import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config/config.js';
import { leasesFor } from '../../src/jobs/leases.js';
import { VALID_ENV } from '../helpers/config.js';

const timeoutOf = (env: Record<string, string> = {}) => readConfig({ ...VALID_ENV, ...env }).agent.timeoutMs;

describe('leasesFor', () => {
  it('with the default agent API time-out (6 s), gives the holds that follow from it', () => {
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

  it('holds a poll longer than a write: reads are retried more often and wait out longer Retry-Afters', () => {
    const { agentRead, agentWrite } = leasesFor(6_000);
    expect(agentRead.callMs).toBeGreaterThan(agentWrite.callMs);
  });
});
