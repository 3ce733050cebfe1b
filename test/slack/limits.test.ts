import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import {
  createSlackLimits,
  PACED_FOR_MS,
  PACED_METHODS,
  SHARED_WAITS_EVERY_MS,
  scopeOf,
  shareSlackLimits,
} from '../../src/slack/limits.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';

/** The limits on a clock the test moves. */
function limitsAt(instances = 1) {
  const clock = { at: 1_000_000 };
  return { clock, limits: createSlackLimits({ now: () => clock.at, instances: () => instances }) };
}

/** How many calls of `method` go at once before the first is deferred. */
function burst(limits: ReturnType<typeof createSlackLimits>, method: string): number {
  let taken = 0;
  while (limits.turn(method, method) === 0) taken++;
  return taken;
}

/** Turns pacing on for `method`, as a 429 with no wait would, and lets a minute pass. */
function refusedOnce(limits: ReturnType<typeof createSlackLimits>, clock: { at: number }, method: string) {
  limits.refused(method, 0);
  clock.at += 60_000;
}

describe('pacing the methods that keep what people see in step', () => {
  it('paces nothing until Slack has refused the method', () => {
    const { limits } = limitsAt();
    for (const method of Object.keys(PACED_METHODS))
      for (let i = 0; i < 200; i++) expect(limits.turn(method, method)).toBe(0);
  });

  it('once refused, lets a short burst go, then one call per turn at nine tenths of the tier', () => {
    const { clock, limits } = limitsAt();
    for (const method of Object.keys(PACED_METHODS)) refusedOnce(limits, clock, method);
    // Tier 2 (about 20 a minute): one at once, then one every 60 / 18 s.
    expect(burst(limits, 'reactions.remove')).toBe(1);
    const wait = limits.turn('reactions.remove', 'reactions.remove');
    expect(wait).toBe(Math.ceil(60_000 / (20 * 0.9)));
    clock.at += wait - 1;
    expect(limits.turn('reactions.remove', 'reactions.remove')).toBeGreaterThan(0);
    clock.at += 1;
    expect(limits.turn('reactions.remove', 'reactions.remove')).toBe(0);
    // Tier 3 (about 50 a minute): two at once.
    expect(burst(limits, 'chat.update')).toBe(2);
    // Over a minute, no more than the tier allows.
    let calls = 0;
    for (let t = 0; t < 60_000; t += 100, clock.at += 100)
      if (limits.turn('agents.sessions.setStatus', 'agents.sessions.setStatus') === 0) calls++;
    expect(calls).toBeLessThanOrEqual(PACED_METHODS['agents.sessions.setStatus'] ?? 0);
    expect(calls).toBeGreaterThanOrEqual(44);
  });

  it('stops pacing once Slack has not refused the method for a while', () => {
    const { clock, limits } = limitsAt();
    limits.refused('reactions.add', 0);
    expect(limits.turn('reactions.add', 'reactions.add')).toBeGreaterThan(0);
    clock.at += PACED_FOR_MS + 1;
    for (let i = 0; i < 100; i++) expect(limits.turn('reactions.add', 'reactions.add')).toBe(0);
  });

  it('shares the tier between the instances running', () => {
    const { clock, limits } = limitsAt(2);
    refusedOnce(limits, clock, 'chat.update');
    let calls = 0;
    for (let t = 0; t < 60_000; t += 100, clock.at += 100)
      if (limits.turn('chat.update', 'chat.update') === 0) calls++;
    expect(calls).toBeGreaterThanOrEqual(21);
    expect(calls).toBeLessThanOrEqual(25);
  });

  it('never paces a call a person waits for', () => {
    const { clock, limits } = limitsAt();
    for (const method of ['chat.postMessage', 'chat.postEphemeral', 'views.open', 'response_url']) {
      refusedOnce(limits, clock, scopeOf(method, 'C0DOCS'));
      for (let i = 0; i < 500; i++) expect(limits.turn(method, scopeOf(method, 'C0DOCS'))).toBe(0);
    }
  });
});

describe('a 429', () => {
  it('holds its scope back for the whole Retry-After, the longest of those given', () => {
    const { clock, limits } = limitsAt();
    const scope = scopeOf('chat.postMessage', 'C0DOCS');
    limits.refused(scope, 5_000);
    limits.refused(scope, 2_000);
    expect(limits.turn('chat.postMessage', scope)).toBe(5_000);
    // Other channels, and other methods, go on.
    expect(limits.turn('chat.postMessage', scopeOf('chat.postMessage', 'C0OTHER'))).toBe(0);
    expect(limits.turn('views.publish', 'views.publish')).toBe(0);
    clock.at += 4_999;
    expect(limits.turn('chat.postMessage', scope)).toBe(1);
    clock.at += 1;
    expect(limits.turn('chat.postMessage', scope)).toBe(0);
  });

  it('holds a paced method back for the whole wait, then paces it from empty', () => {
    const { clock, limits } = limitsAt();
    limits.refused('chat.update', 30_000);
    expect(limits.turn('chat.update', 'chat.update')).toBe(30_000);
    clock.at += 30_000;
    expect(limits.turn('chat.update', 'chat.update')).toBe(Math.ceil(60_000 / (50 * 0.9)));
  });

  it('scopes a post by its channel and every other method by itself', () => {
    expect(scopeOf('chat.postMessage', 'C0DOCS')).toBe('chat.postMessage:C0DOCS');
    expect(scopeOf('chat.update', 'C0DOCS')).toBe('chat.update');
    expect(scopeOf('chat.postMessage')).toBe('chat.postMessage');
  });
});

describe('the picture shared by the instances', () => {
  it('tells the store each 429, and keeps to the waits the other instances were told', async () => {
    const store = openSqliteStore(':memory:');
    try {
      const lines: string[] = [];
      const logger = createLogger({ level: 'debug', secrets: [], write: (l) => lines.push(l) });
      let live = 1;
      const shared = shareSlackLimits({ store, logger, liveCount: () => live });
      const here = createSlackLimits({ tell: shared.tell });
      here.refused('reactions.remove', 40_000);
      await vi.waitFor(async () =>
        expect((await store.slackPauses()).map((p) => p.scope)).toEqual(['reactions.remove']),
      );

      // Another instance, on the same store: it learns the wait once more than one instance runs.
      const there = createSlackLimits();
      const loop = shared.loop(there);
      loop.start();
      await new Promise((resolve) => setTimeout(resolve, SHARED_WAITS_EVERY_MS / 10));
      expect(there.turn('reactions.remove', 'reactions.remove')).toBe(0);
      live = 2;
      loop.kick();
      await vi.waitFor(() =>
        expect(there.turn('reactions.remove', 'reactions.remove')).toBeGreaterThan(30_000),
      );
      await loop.stop();
      // What it learnt is not told on again.
      expect((await store.slackPauses()).map((p) => p.scope)).toEqual(['reactions.remove']);
    } finally {
      await store.close();
    }
  });

  it('learns a wait as its own: the method is deferred, and paced after it', () => {
    const { clock, limits } = limitsAt();
    limits.learn([{ scope: 'chat.update', leftMs: 10_000 }]);
    expect(limits.turn('chat.update', 'chat.update')).toBe(10_000);
    clock.at += 10_000;
    expect(limits.turn('chat.update', 'chat.update')).toBeGreaterThan(0);
  });
});
