import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { createTaskTracker, MAX_QUEUED_TASKS, TASK_CONCURRENCY } from '../../src/util/tasks.js';
import { createYieldGate } from '../../src/util/yield-gate.js';

function setup(options: { concurrency?: number; maxQueued?: number } = {}) {
  const lines: { level: string; msg: string; [k: string]: unknown }[] = [];
  const logger = createLogger({ level: 'debug', secrets: [], write: (l) => lines.push(JSON.parse(l)) });
  const tracker = createTaskTracker(logger, options);
  let active = 0;
  let peak = 0;
  const gates: (() => void)[] = [];
  const done: number[] = [];
  /** Work that runs until released (`release`), counting how many run at once. */
  const work = (id: number) => async () => {
    active += 1;
    peak = Math.max(peak, active);
    await new Promise<void>((resolve) => gates.push(resolve));
    active -= 1;
    done.push(id);
  };
  const release = async () => {
    for (const gate of gates.splice(0)) gate();
    await new Promise((r) => setTimeout(r, 0));
  };
  return { tracker, lines, work, release, done, peak: () => peak, active: () => active };
}

describe('task tracker bounds', () => {
  it('has documented defaults', () => {
    expect(TASK_CONCURRENCY).toBe(16);
    expect(MAX_QUEUED_TASKS).toBe(5_000);
  });

  it('runs at most `concurrency` at once, queues at most `maxQueued`, refuses the rest at once', async () => {
    const t = setup({ concurrency: 2, maxQueued: 3 });
    const taken: boolean[] = [];
    for (let i = 0; i < 10; i++) taken.push(t.tracker.run(`task ${i}`, t.work(i)));
    expect(taken).toEqual([true, true, true, true, true, false, false, false, false, false]);
    expect(t.tracker.size).toBe(5);
    expect(t.tracker.hasRoom).toBe(false);
    // The refusal is reported once for the burst, not once per task.
    expect(t.lines.filter((l) => l.msg.startsWith('background work is full'))).toHaveLength(1);

    // Taken work all runs, never more than two at once; a freed slot makes room again.
    while (t.done.length < 5) await t.release();
    expect(t.done.sort()).toEqual([0, 1, 2, 3, 4]);
    expect(t.peak()).toBe(2);
    expect(t.tracker.size).toBe(0);
    expect(t.tracker.hasRoom).toBe(true);
    expect(t.lines.filter((l) => l.msg === 'background work has room again')).toEqual([
      expect.objectContaining({ refused: 5 }),
    ]);
  });

  it('holds its bound under a flood: run never waits, and what it took is what ran', async () => {
    const t = setup({ concurrency: 4, maxQueued: 20 });
    let accepted = 0;
    let refused = 0;
    for (let round = 0; round < 50; round++) {
      const doneBefore = t.done.length;
      for (let i = 0; i < 100; i++) {
        if (t.tracker.run('flood', t.work(round * 100 + i))) accepted += 1;
        else refused += 1;
        expect(t.tracker.size).toBeLessThanOrEqual(24);
      }
      // `run` answers at once: no work could finish while the round was being offered.
      expect(t.done.length).toBe(doneBefore);
      await t.release();
    }
    while (t.tracker.size > 0) await t.release();
    expect(t.peak()).toBe(4);
    expect(accepted + refused).toBe(5_000);
    expect(t.done).toHaveLength(accepted);
    expect(refused).toBeGreaterThan(0);
  });

  it('refuses work while draining, and leaves queued work to the store', async () => {
    const t = setup({ concurrency: 1, maxQueued: 5 });
    t.tracker.run('first', t.work(1));
    t.tracker.run('queued', t.work(2));
    const drained = t.tracker.drain(1_000);
    expect(t.tracker.run('late', t.work(3))).toBe(false);
    expect(t.tracker.hasRoom).toBe(false);
    await t.release();
    expect(await drained).toBe(true);
    expect(t.done).toEqual([1]);
    expect(t.lines.some((l) => l.msg.startsWith('leaving queued work'))).toBe(true);
  });

  it('logs a failing task and goes on', async () => {
    const t = setup({ concurrency: 1, maxQueued: 1 });
    t.tracker.run('boom', async () => {
      throw new Error('boom');
    });
    t.tracker.run('after', t.work(1));
    while (t.done.length < 1) await t.release();
    expect(t.lines.find((l) => l.msg === 'boom failed')).toBeDefined();
  });
});

describe('task tracker and Slack requests', () => {
  it('starts no task while a request is in flight until the gate lets it through', async () => {
    const logger = createLogger({ level: 'error', secrets: [], write: () => {} });
    const gate = createYieldGate({ trickleMs: 10_000 });
    const tracker = createTaskTracker(logger, { gate });
    let started = false;
    gate.requestStarted();
    expect(
      tracker.run('work', async () => {
        started = true;
      }),
    ).toBe(true);
    await new Promise((r) => setTimeout(r, 20));
    expect(started).toBe(false);
    gate.requestEnded();
    await new Promise((r) => setTimeout(r, 20));
    expect(started).toBe(true);
  });
});
