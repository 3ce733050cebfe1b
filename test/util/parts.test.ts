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
