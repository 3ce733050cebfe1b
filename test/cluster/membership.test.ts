import { describe, expect, it } from 'vitest';
import { createMembership } from '../../src/cluster/membership.js';
import { createLogger } from '../../src/logging/logger.js';
import type { Orphans, Store } from '../../src/store/types.js';

describe('membership take-over rounds', () => {
  it('leaves orphans in the store while this instance has no room, and takes them once it has', async () => {
    const adoptions: number[] = [];
    const left: Orphans = { jobs: [{ id: 7 } as Orphans['jobs'][number]], runs: [] };
    const store = {
      shared: false,
      heartbeat: async () => {},
      liveInstances: async () => 1,
      adoptOrphans: async () => {
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
