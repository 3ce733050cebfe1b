import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { backoffMs, createLoop, type Loop, withTimeout } from '../../src/util/loop.js';
import type { YieldGate } from '../../src/util/yield-gate.js';

/** Lets `ms` pass on the fake clock, running the timers and the promises they settle. */
const pass = (ms: number) => vi.advanceTimersByTimeAsync(ms);

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

type StepResult = { busy: boolean; sleepMs?: number };

/** A loop whose steps answer from `results` (idle once they run out), recording when each ran. */
function loopOf(
  results: Array<StepResult | Error | (() => Promise<StepResult>)>,
  extra: { gate?: YieldGate } = {},
) {
  const lines: string[] = [];
  const startedAt: number[] = [];
  const loop = createLoop({
    name: 'test loop',
    logger: createLogger({ level: 'debug', secrets: [], write: (l) => lines.push(l) }),
    idleMs: 1_000,
    ...extra,
    async step() {
      startedAt.push(Date.now());
      const next = results.shift() ?? { busy: false };
      if (next instanceof Error) throw next;
      return typeof next === 'function' ? next() : next;
    },
  });
  return { loop, lines, startedAt };
}

describe('background loop', () => {
  let running: Loop | undefined;
  beforeEach(() => {
    vi.useFakeTimers({ now: 0, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(async () => {
    await running?.stop();
    running = undefined;
    vi.useRealTimers();
  });

  it('runs a first step at start, then sleeps the idle time between steps that found nothing', async () => {
    const { loop, startedAt } = loopOf([]);
    running = loop;
    await pass(5_000);
    expect(startedAt).toEqual([]);
    loop.start();
    loop.start();
    await pass(2_500);
    expect(startedAt).toEqual([5_000, 6_000, 7_000]);
  });

  it('runs again at once while steps are busy, and honours a shorter sleep but never a longer one', async () => {
    const { loop, startedAt } = loopOf([
      { busy: true },
      { busy: true },
      { busy: false, sleepMs: 200 },
      { busy: false, sleepMs: 60_000 },
      { busy: false, sleepMs: -5 },
    ]);
    running = loop;
    loop.start();
    await pass(1_250);
    // A zero delay is Node's shortest, one millisecond.
    expect(startedAt).toEqual([0, 1, 2, 202, 1_202, 1_203]);
  });

  it('kick runs the next step now instead of after the idle sleep', async () => {
    const { loop, startedAt } = loopOf([]);
    running = loop;
    loop.start();
    await pass(300);
    loop.kick();
    await pass(0);
    expect(startedAt).toEqual([0, 300]);
    await pass(999);
    expect(startedAt).toEqual([0, 300]);
    await pass(1);
    expect(startedAt).toEqual([0, 300, 1_300]);
  });

  it('kicks during a step run one more step right after it, however many kicks came', async () => {
    const slow = deferred();
    const { loop, startedAt } = loopOf([
      async () => {
        await slow.promise;
        return { busy: false };
      },
    ]);
    running = loop;
    loop.start();
    await pass(0);
    loop.kick();
    loop.kick();
    loop.kick();
    await pass(50);
    expect(startedAt).toEqual([0]);
    slow.resolve();
    await pass(0);
    expect(startedAt).toEqual([0, 50]);
    await pass(999);
    expect(startedAt).toEqual([0, 50]);
  });

  it('logs a failed step under its name and carries on after the idle sleep', async () => {
    const { loop, startedAt, lines } = loopOf([new Error('store went away'), { busy: true }]);
    running = loop;
    loop.start();
    await pass(0);
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] as string);
    expect(line.level).toBe('error');
    expect(line.msg).toBe('test loop step failed');
    expect(line.error.message).toBe('store went away');
    await pass(999);
    expect(startedAt).toEqual([0]);
    await pass(2);
    expect(startedAt).toEqual([0, 1_000, 1_001]);
  });

  it('stop waits for the running step and tracked work, then runs no further step, even when kicked', async () => {
    const slow = deferred();
    const sideWork = deferred();
    const { loop, startedAt } = loopOf([
      async () => {
        await slow.promise;
        return { busy: true };
      },
    ]);
    loop.start();
    await pass(0);
    loop.track(sideWork.promise);
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    loop.kick();
    slow.resolve();
    await pass(10);
    expect(stopped).toBe(false);
    sideWork.resolve();
    await stopping;
    expect(stopped).toBe(true);
    loop.kick();
    await pass(5_000);
    expect(startedAt).toEqual([0]);
  });

  it('waits at the gate before each step, and a loop stopped while waiting never starts that step', async () => {
    const open = deferred();
    const gate = { clear: () => open.promise } as unknown as YieldGate;
    const { loop, startedAt } = loopOf([], { gate });
    loop.start();
    await pass(100);
    expect(startedAt).toEqual([]);
    const stopping = loop.stop();
    open.resolve();
    await stopping;
    await pass(5_000);
    expect(startedAt).toEqual([]);
  });

  it('tracked work that fails is waited for by stop and raises no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      const { loop } = loopOf([]);
      const failing = deferred();
      loop.track(failing.promise.then(() => Promise.reject(new Error('tracked work that failed'))));
      const stopping = loop.stop();
      failing.resolve();
      await stopping;
      // Node reports an unhandled rejection after the microtasks of the turn have run.
      await new Promise((resolve) => process.nextTick(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('withTimeout', () => {
  it('gives the answer that comes in time', async () => {
    await expect(withTimeout(Promise.resolve('ok'), 1_000)).resolves.toBe('ok');
  });

  it('gives undefined once the time is up', async () => {
    vi.useFakeTimers();
    const answer = withTimeout(new Promise<string>(() => {}), 1_500);
    await vi.advanceTimersByTimeAsync(1_500);
    await expect(answer).resolves.toBeUndefined();
  });

  it('passes a failure that comes in time on, and leaves no timer behind', async () => {
    vi.useFakeTimers();
    await expect(withTimeout(Promise.reject(new Error('refused')), 1_000)).rejects.toThrow('refused');
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('backoffMs', () => {
  it('waits the first delay after one failure, doubling with each further one', () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(1_000, n, 60_000))).toEqual([1_000, 2_000, 4_000, 8_000]);
  });

  it('never waits longer than the cap, nor less than the first delay', () => {
    expect(backoffMs(1_000, 10, 60_000)).toBe(60_000);
    expect(backoffMs(1_000, 0, 60_000)).toBe(1_000);
  });

  it('stays finite after very many failures', () => {
    expect(backoffMs(1_000, 10_000, Number.POSITIVE_INFINITY)).toBe(1_000 * 2 ** 30);
  });
});
