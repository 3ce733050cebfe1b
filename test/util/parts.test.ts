import { describe, expect, it } from 'vitest';
import { type Part, startParts, stopParts } from '../../src/util/parts.js';

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
});
