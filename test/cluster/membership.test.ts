import { describe, expect, it } from 'vitest';
import { longestAgentCallMs, postPolicy } from '../../src/agent/errors.js';
import {
  CLOCK_WARNING_EVERY_MS,
  createMembership,
  RenewalTooSlowError,
  readyForCall,
} from '../../src/cluster/membership.js';
import { leasesFor } from '../../src/jobs/job-context.js';
import { createLogger } from '../../src/logging/logger.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Orphans, Store } from '../../src/store/types.js';

describe('membership take-over rounds', () => {
  it('leaves orphans in the store while this instance has no room, and takes them once it has', async () => {
    const adoptions: number[] = [];
    const left: Orphans = { jobs: [{ id: 7 } as Orphans['jobs'][number]], runs: [] };
    const store = {
      shared: false,
      heartbeat: async () => Date.now(),
      liveInstances: async () => 1,
      takeOverOrphans: async () => {
        adoptions.push(Date.now());
        return left;
      },
      retireInstance: async () => {},
    } as unknown as Store;
    let room = false;
    const received: Orphans[] = [];
    const membership = createMembership({
      store,
      instanceId: 'i-1',
      timeoutMs: 500,
      logger: createLogger({ level: 'error', secrets: [], write: () => {} }),
      onOrphans: (orphans) => received.push(orphans),
      canTakeOver: () => room,
    });
    await membership.join();
    expect(adoptions).toEqual([]);
    room = true;
    await membership.join();
    expect(adoptions).toHaveLength(1);
    expect(received).toEqual([left]);
  });
});

describe('the clock offset measured at each heartbeat', () => {
  /** A store whose clock is `aheadMs` ahead of this host's, and a membership on this host. */
  function skewed(aheadMs: number) {
    const host = { at: 1_800_000_000_000 };
    const store = openSqliteStore(':memory:', { now: () => host.at + aheadMs });
    const lines: string[] = [];
    const offsets: number[] = [];
    const membership = createMembership({
      store,
      instanceId: 'i-1',
      timeoutMs: 4_000,
      logger: createLogger({ level: 'info', secrets: [], write: (line) => lines.push(line) }),
      onOrphans: () => {},
      onClockOffset: (offsetMs) => offsets.push(offsetMs),
      now: () => host.at,
    });
    const warnings = () => lines.filter((l) => l.includes('clock is far from the database'));
    return { host, store, membership, offsets, warnings };
  }

  it('reports the store’s clock minus this host’s, and warns past a quarter of the time-out, at most once in a while', async () => {
    const w = skewed(-1_500);
    try {
      await w.membership.join();
      expect(w.offsets).toEqual([-1_500]);
      expect(w.warnings()).toHaveLength(1);
      expect(JSON.parse(w.warnings()[0] ?? '{}')).toMatchObject({ offsetMs: -1_500, thresholdMs: 1_000 });
      // Every beat measures; the warning is not repeated at each one.
      w.host.at += 1_000;
      await w.membership.join();
      expect(w.offsets).toEqual([-1_500, -1_500]);
      expect(w.warnings()).toHaveLength(1);
      w.host.at += CLOCK_WARNING_EVERY_MS;
      await w.membership.join();
      expect(w.warnings()).toHaveLength(2);
    } finally {
      await w.store.close();
    }
  });

  it('stays quiet while the clocks agree to within the threshold', async () => {
    const w = skewed(900);
    try {
      await w.membership.join();
      expect(w.offsets).toEqual([900]);
      expect(w.warnings()).toEqual([]);
    } finally {
      await w.store.close();
    }
  });
});

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
