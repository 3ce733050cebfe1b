import { describe, expect, it } from 'vitest';
import { createYieldGate } from '../../src/util/yield-gate.js';

const tick = () => new Promise((r) => setImmediate(r));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('yield gate', () => {
  it('lets a step through after pending I/O when no request is in flight', async () => {
    const gate = createYieldGate();
    let passed = false;
    void gate.clear().then(() => {
      passed = true;
    });
    await Promise.resolve();
    expect(passed).toBe(false);
    await tick();
    await tick();
    expect(passed).toBe(true);
  });

  it('holds steps while requests are in flight and lets them all go once the server is quiet', async () => {
    const gate = createYieldGate({ trickleMs: 1_000, quietMs: 30 });
    gate.requestStarted();
    let passed = 0;
    for (let i = 0; i < 3; i++) void gate.clear().then(() => passed++);
    await sleep(20);
    expect(passed).toBe(0);
    gate.requestEnded();
    expect(gate.inFlight).toBe(0);
    await tick();
    await tick();
    // Another request may be about to be read: nothing goes until the quiet time has passed.
    expect(passed).toBe(0);
    await sleep(45);
    expect(passed).toBe(3);
  });

  it('holds steps through a burst whose requests are answered one after another', async () => {
    // Node answers one request before it reads the next: the count of requests in flight drops
    // to zero between every two of them, and that alone must not open the gate.
    const gate = createYieldGate({ trickleMs: 1_000, quietMs: 40 });
    let passed = 0;
    gate.requestStarted();
    for (let i = 0; i < 3; i++) void gate.clear().then(() => passed++);
    for (let i = 0; i < 10; i++) {
      gate.requestEnded();
      await sleep(5);
      gate.requestStarted();
    }
    expect(passed).toBe(0);
    gate.requestEnded();
    await sleep(80);
    expect(passed).toBe(3);
  });

  it('under requests that never pause, lets one step through per trickle interval', async () => {
    const gate = createYieldGate({ trickleMs: 30, holdMs: 0 });
    gate.requestStarted();
    let passed = 0;
    for (let i = 0; i < 5; i++) void gate.clear().then(() => passed++);
    await sleep(75);
    // Two intervals have passed (one, on a slow machine): never all of them at once.
    expect(passed).toBeGreaterThanOrEqual(1);
    expect(passed).toBeLessThanOrEqual(2);
    gate.requestEnded();
  });

  it('lets nothing through while a burst is shorter than the hold time', async () => {
    const gate = createYieldGate({ trickleMs: 40, holdMs: 120, quietMs: 1_000 });
    gate.requestStarted();
    let passed = 0;
    for (let i = 0; i < 5; i++) void gate.clear().then(() => passed++);
    await sleep(60);
    expect(passed).toBe(0);
    // Past the hold time, the flood that never paused lets steps through one by one.
    await sleep(120);
    expect(passed).toBeGreaterThanOrEqual(1);
    expect(passed).toBeLessThan(5);
    gate.requestEnded();
  });

  it('never counts below zero requests in flight', () => {
    const gate = createYieldGate();
    gate.requestEnded();
    gate.requestStarted();
    expect(gate.inFlight).toBe(1);
  });
});
