import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { CHECKPOINT_INTERVAL_MS, createCheckpointLoop } from '../../src/store/checkpoints.js';
import type { Loop } from '../../src/util/loop.js';

describe('the store checkpoint loop', () => {
  let loop: Loop | undefined;
  const lines: string[] = [];
  const logger = createLogger({ level: 'error', secrets: [], write: (line) => lines.push(line) });
  afterEach(async () => {
    await loop?.stop();
    loop = undefined;
    lines.length = 0;
    vi.useRealTimers();
  });

  it('checkpoints at once, then once a second', async () => {
    vi.useFakeTimers();
    const checkpoint = vi.fn(async () => undefined);
    loop = createCheckpointLoop({ store: { checkpoint }, logger });
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(checkpoint).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(CHECKPOINT_INTERVAL_MS - 1);
    expect(checkpoint).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(checkpoint).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(3 * CHECKPOINT_INTERVAL_MS);
    expect(checkpoint).toHaveBeenCalledTimes(5);
    expect(CHECKPOINT_INTERVAL_MS).toBe(1_000);
  });

  it('waits for the gate before each checkpoint', async () => {
    vi.useFakeTimers();
    let open!: () => void;
    const gate = {
      clear: vi.fn(() => new Promise<void>((resolve) => (open = resolve))),
      requestStarted: () => undefined,
      requestEnded: () => undefined,
      inFlight: 0,
    };
    const checkpoint = vi.fn(async () => undefined);
    loop = createCheckpointLoop({ store: { checkpoint }, logger, gate, intervalMs: 10 });
    loop.start();
    await vi.advanceTimersByTimeAsync(50);
    expect(gate.clear).toHaveBeenCalledTimes(1);
    expect(checkpoint).not.toHaveBeenCalled();
    open();
    await vi.advanceTimersByTimeAsync(0);
    expect(checkpoint).toHaveBeenCalledTimes(1);
  });

  it('logs a failed checkpoint and goes on checkpointing', async () => {
    vi.useFakeTimers();
    const checkpoint = vi
      .fn<() => Promise<void>>()
      .mockRejectedValueOnce(new Error('database is locked'))
      .mockResolvedValue(undefined);
    loop = createCheckpointLoop({ store: { checkpoint }, logger, intervalMs: 10 });
    loop.start();
    await vi.advanceTimersByTimeAsync(10);
    expect(checkpoint).toHaveBeenCalledTimes(2);
    expect(lines.join('\n')).toMatch(/store checkpoint step failed.*database is locked/s);
  });
});
