import { describe, expect, it } from 'vitest';
import { CLOCK_WARNING_EVERY_MS, createMembership } from '../../src/cluster/membership.js';
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
