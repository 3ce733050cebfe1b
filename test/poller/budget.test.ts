import { describe, expect, it } from 'vitest';
import { BUDGET_MARGIN, createRequestBudget } from '../../src/poller/budget.js';

/**
 * A budget on a virtual clock: sleeps are timers that fire in order as the clock is moved to
 * them, and every slot's start is recorded when its taker resumes.
 */
function fakeBudget(rate: () => number) {
  let clock = 0;
  const timers: { at: number; fire: () => void }[] = [];
  const starts: number[] = [];
  const budget = createRequestBudget({
    rate,
    now: () => clock,
    sleep: (ms) => new Promise<void>((fire) => timers.push({ at: clock + ms, fire })),
  });
  const settle = () => new Promise((r) => setImmediate(r));
  /** Runs `count` takes at once and moves the clock until all have started. */
  const takeAll = async (count: number) => {
    let started = 0;
    for (let i = 0; i < count; i++)
      void budget.take().then(() => {
        starts.push(clock);
        started += 1;
      });
    while (started < count) {
      await settle();
      timers.sort((a, b) => a.at - b.at);
      const next = timers.shift();
      if (next) {
        clock = Math.max(clock, next.at);
        next.fire();
      }
    }
  };
  return { takeAll, starts, advance: (ms: number) => (clock += ms) };
}

/** The most slot starts in any window [t, t + 1000). */
const busiestSecond = (starts: number[]) =>
  Math.max(...starts.map((t) => starts.filter((s) => s >= t && s < t + 1_000).length));

describe('request budget', () => {
  it('spaces requests evenly at the rate, never more than the rate in a second', async () => {
    const b = fakeBudget(() => 10);
    for (let i = 0; i < 25; i++) await b.takeAll(1);
    const gaps = b.starts.slice(1).map((t, i) => t - (b.starts[i] ?? 0));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(100);
    // Once a second's worth has started, the window's margin adds its 20 ms.
    const mean = gaps.reduce((a, g) => a + g, 0) / gaps.length;
    expect(mean).toBeLessThanOrEqual(100 * (1 + BUDGET_MARGIN) + 0.5);
    expect(busiestSecond(b.starts)).toBe(10);
  });

  it('keeps the rate when timers fire late, without exceeding it in any second', async () => {
    // Every sleep overshoots by up to 3 ms, as timers under load do; the spacing is 2.5 ms.
    let clock = 0;
    const starts: number[] = [];
    const budget = createRequestBudget({
      rate: () => 400,
      now: () => clock,
      sleep: async (ms) => {
        clock += ms + Math.random() * 3;
      },
    });
    for (let i = 0; i < 2_000; i++) {
      await budget.take();
      starts.push(clock);
    }
    const span = (starts.at(-1) ?? 0) - (starts[0] ?? 0);
    // 2000 starts at 400 a second take about five seconds, not the 7+ that late timers would make.
    expect(span).toBeLessThan(5_400);
    expect(busiestSecond(starts)).toBeLessThanOrEqual(400);
  });

  it('never lets a backlog through in a burst', async () => {
    const b = fakeBudget(() => 4);
    await b.takeAll(20);
    expect(b.starts).toHaveLength(20);
    expect(busiestSecond(b.starts)).toBeLessThanOrEqual(4);
  });

  it('starts at once after an idle spell', async () => {
    const b = fakeBudget(() => 2);
    await b.takeAll(1);
    b.advance(5_000);
    const before = b.starts.length;
    await b.takeAll(1);
    expect(b.starts[before]).toBe(5_000);
  });

  it('follows a rate that changes, as when instances join', async () => {
    let rate = 10;
    const b = fakeBudget(() => rate);
    await b.takeAll(1);
    rate = 5;
    await b.takeAll(1);
    expect((b.starts[1] ?? 0) - (b.starts[0] ?? 0)).toBeGreaterThanOrEqual(200);
  });
});
