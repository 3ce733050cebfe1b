import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createYieldGate } from '../../src/util/yield-gate.js';

/** Lets `ms` pass on the fake clock, running timers, immediates and the promises they settle. */
const pass = (ms: number) => vi.advanceTimersByTimeAsync(ms);

describe('yield gate', () => {
  beforeEach(() => {
    vi.useFakeTimers({
      toFake: [
        'setTimeout',
        'clearTimeout',
        'setInterval',
        'clearInterval',
        'setImmediate',
        'clearImmediate',
        'performance',
      ],
    });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Queues `n` steps at the gate; returns how many have been let through so far. */
  const steps = (gate: ReturnType<typeof createYieldGate>, n: number) => {
    let passed = 0;
    for (let i = 0; i < n; i++) void gate.clear().then(() => passed++);
    return () => passed;
  };

  it('lets a step through after pending I/O when the server has been quiet', async () => {
    const gate = createYieldGate();
    const passed = steps(gate, 1);
    await Promise.resolve();
    expect(passed()).toBe(0);
    await pass(1);
    expect(passed()).toBe(1);
  });

  it('holds steps while requests are in flight and lets them all go once the server is quiet', async () => {
    const gate = createYieldGate({ trickleMs: 1_000, quietMs: 30 });
    gate.requestStarted();
    const passed = steps(gate, 3);
    await pass(20);
    expect(passed()).toBe(0);
    gate.requestEnded();
    expect(gate.inFlight).toBe(0);
    // Another request may be about to be read: nothing goes until the quiet time has passed.
    await pass(25);
    expect(passed()).toBe(0);
    await pass(10);
    expect(passed()).toBe(3);
  });

  it('holds steps through a burst whose requests are answered one after another', async () => {
    // Node answers one request before it reads the next: the count of requests in flight drops
    // to zero between every two of them, and that alone must not open the gate.
    const gate = createYieldGate({ trickleMs: 1_000, quietMs: 40 });
    gate.requestStarted();
    const passed = steps(gate, 3);
    for (let i = 0; i < 10; i++) {
      gate.requestEnded();
      await pass(5);
      gate.requestStarted();
    }
    expect(passed()).toBe(0);
    gate.requestEnded();
    await pass(39);
    expect(passed()).toBe(0);
    await pass(2);
    expect(passed()).toBe(3);
  });

  it('under requests that never pause, lets one step through per trickle interval', async () => {
    const gate = createYieldGate({ trickleMs: 30, holdMs: 0 });
    gate.requestStarted();
    const passed = steps(gate, 5);
    await pass(75);
    expect(passed()).toBe(2);
    gate.requestEnded();
  });

  it('lets nothing through while a burst is shorter than the hold time', async () => {
    const gate = createYieldGate({ trickleMs: 40, holdMs: 120, quietMs: 1_000 });
    gate.requestStarted();
    const passed = steps(gate, 5);
    await pass(110);
    expect(passed()).toBe(0);
    // Past the hold time, the flood that never paused lets steps through one by one.
    await pass(70);
    expect(passed()).toBe(2);
    gate.requestEnded();
  });

  it('never counts below zero requests in flight', () => {
    const gate = createYieldGate();
    gate.requestEnded();
    gate.requestStarted();
    expect(gate.inFlight).toBe(1);
  });
});
