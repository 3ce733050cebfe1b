import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type Part,
  type Running,
  runningParts,
  SHUTDOWN_GRACE_MS,
  startParts,
  stopParts,
} from '../src/app-parts.js';
import { createLogger } from '../src/logging/logger.js';
import type { Loop } from '../src/util/loop.js';

const WARM = { rehearsals: 2, requests: 3, ms: 40 };

interface Options {
  drained?: boolean;
  receiverStopFails?: boolean;
  leaveFails?: boolean;
  loopsHang?: boolean;
  /** How far the (fake) clock moves while the work in flight drains. */
  drainTakesMs?: number;
}

/** What the running app is made of, each part recording its calls in one list, in order. */
function app(options: Options = {}) {
  const calls: string[] = [];
  const lines: string[] = [];
  const loop = (name: string): Loop => ({
    start: () => void calls.push(`${name} start`),
    stop: () => {
      calls.push(`${name} stop`);
      return options.loopsHang ? new Promise<void>(() => {}) : Promise.resolve();
    },
    kick() {},
    track() {},
  });
  const running: Running = {
    logger: createLogger({ level: 'info', secrets: [], write: (l) => lines.push(l) }),
    store: { close: async () => void calls.push('store close') },
    membership: {
      join: async () => void calls.push('membership join'),
      start: () => void calls.push('membership start'),
      leave: async (leaving) => {
        calls.push(`membership leave ${JSON.stringify(leaving)}`);
        if (options.leaveFails) throw new Error('store unreachable');
      },
    },
    receiver: {
      start: async () => {
        calls.push('receiver start');
        return 4321;
      },
      stop: async () => {
        calls.push('receiver stop');
        if (options.receiverStopFails) throw new Error('socket already closed');
      },
    },
    warm: async (port) => {
      calls.push(`warm ${port}`);
      return WARM;
    },
    loops: [loop('outbox'), loop('poller'), loop('retention'), loop('checkpoints')],
    health: { setPollerRunning: (on) => void calls.push(`poller running ${on}`) },
    jobs: { stop: () => void calls.push('jobs stop') },
    tasks: {
      drain: async (ms) => {
        calls.push(`drain within ${ms}`);
        if (options.drainTakesMs) vi.setSystemTime(Date.now() + options.drainTakesMs);
        return options.drained ?? true;
      },
    },
    ready: (port, warmUp) => void calls.push(`ready ${port} ${JSON.stringify(warmUp)}`),
    unready: () => void calls.push('unready'),
  };
  const built = runningParts(running);
  return { calls, lines, ...built };
}

const messages = (lines: string[]) => lines.map((l) => JSON.parse(l) as { level: string; msg: string });

describe('the running app’s parts', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('start in order: registered, then serving and warm, then background work, then ready', async () => {
    const { calls, parts, port } = app();
    expect(parts.map((p) => p.name)).toEqual([
      'store',
      'membership',
      'loops',
      'work in flight',
      'receiver',
      'background',
      'ready',
    ]);
    expect(port()).toBe(0);
    await startParts(parts);
    expect(port()).toBe(4321);
    expect(calls).toEqual([
      'membership join',
      'receiver start',
      'warm 4321',
      'outbox start',
      'poller start',
      'retention start',
      'checkpoints start',
      'poller running true',
      'membership start',
      `ready 4321 ${JSON.stringify(WARM)}`,
    ]);
  });

  it('stop backward: unready first, the receiver before the drain, the loops after it, the store last', async () => {
    vi.useFakeTimers({ now: 1_000_000, toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const { calls, parts, lines } = app();
    await startParts(parts);
    calls.length = 0;
    await stopParts(parts);
    expect(calls).toEqual([
      'unready',
      'receiver stop',
      'jobs stop',
      `drain within ${SHUTDOWN_GRACE_MS}`,
      'poller running false',
      'outbox stop',
      'poller stop',
      'retention stop',
      'checkpoints stop',
      'membership leave {"callsUnderWay":false}',
      'store close',
    ]);
    expect(messages(lines).map((l) => l.msg)).toEqual([
      'shutting down',
      'receiver stopped',
      'tasks drained',
      'poller, outbox, retention sweep and checkpoints stopped',
    ]);
  });

  it('tell the store calls are under way when the grace ran out with work in flight', async () => {
    const { calls, parts, lines } = app({ drained: false });
    await startParts(parts);
    await stopParts(parts);
    expect(calls).toContain('membership leave {"callsUnderWay":true}');
    expect(messages(lines)).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: 'shutdown grace ran out with work in flight' }),
    );
  });

  it('carry on stopping when the receiver or signing off fails, and still close the store', async () => {
    const { calls, parts, lines } = app({ receiverStopFails: true, leaveFails: true });
    await startParts(parts);
    await stopParts(parts);
    expect(calls.at(-1)).toBe('store close');
    const warnings = messages(lines).filter((l) => l.level === 'warn');
    expect(warnings.map((l) => l.msg)).toEqual([
      'stopping the Slack receiver failed',
      'could not sign off from the store',
    ]);
    expect(lines.join('\n')).toContain('socket already closed');
  });

  it('give loops that will not stop what is left of the grace, at least half a second, then close anyway', async () => {
    vi.useFakeTimers({ now: 1_000_000, toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const { calls, parts } = app({ loopsHang: true });
    await startParts(parts);
    let stopped = false;
    const stopping = stopParts(parts).then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(SHUTDOWN_GRACE_MS - 1);
    expect(stopped).toBe(false);
    expect(calls).not.toContain('store close');
    await vi.advanceTimersByTimeAsync(1);
    await stopping;
    expect(calls.at(-1)).toBe('store close');

    // Once the grace is spent (a slow drain), the loops still get half a second.
    const late = app({ loopsHang: true, drainTakesMs: SHUTDOWN_GRACE_MS + 5_000 });
    await startParts(late.parts);
    let lateStopped = false;
    const lateStopping = stopParts(late.parts).then(() => {
      lateStopped = true;
    });
    await vi.advanceTimersByTimeAsync(499);
    expect(lateStopped).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await lateStopping;
    expect(late.calls.at(-1)).toBe('store close');
  });
});

describe('parts of the running app', () => {
  it('start in order and stop in reverse, each awaited before the next', async () => {
    const seen: string[] = [];
    const part = (name: string): Part => ({
      name,
      start: async () => {
        await Promise.resolve();
        seen.push(`start ${name}`);
      },
      stop: async () => {
        await Promise.resolve();
        seen.push(`stop ${name}`);
      },
    });
    const parts = [part('store'), { name: 'quiet' }, part('receiver')];
    await startParts(parts);
    await stopParts(parts);
    expect(seen).toEqual(['start store', 'start receiver', 'stop receiver', 'stop store']);
  });

  it('a part that fails to start: the ones before it are stopped, backward, and the failure passed on', async () => {
    const seen: string[] = [];
    const parts: Part[] = [
      { name: 'store', stop: () => void seen.push('stop store') },
      {
        name: 'membership',
        start: () => void seen.push('start membership'),
        stop: () => void seen.push('stop membership'),
      },
      {
        name: 'receiver',
        start: () => Promise.reject(new Error('Slack refused SLACK_APP_TOKEN')),
        stop: () => void seen.push('stop receiver'),
      },
      { name: 'ready', start: () => void seen.push('start ready'), stop: () => void seen.push('stop ready') },
    ];
    await expect(startParts(parts)).rejects.toThrow('Slack refused SLACK_APP_TOKEN');
    expect(seen).toEqual(['start membership', 'stop membership', 'stop store']);
  });
});
