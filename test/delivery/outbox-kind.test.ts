import { describe, expect, it } from 'vitest';
import { ClaimLost, unkeyedPostKey } from '../../src/delivery/outbox-kind.js';
import { createSender } from '../../src/delivery/outbox-registry.js';
import { useDeliveryWorld } from '../helpers/delivery-world.js';

describe('what every kind of outbox item shares', () => {
  const w = useDeliveryWorld();

  it('names a post queued without a dedupe key by its outbox id, as earlier releases did', () => {
    expect(unkeyedPostKey(12)).toBe('outbox-12');
  });

  it('tells a claim taken over from a failure, so the outbox writes nothing for it', async () => {
    const lost = new ClaimLost();
    expect(lost).toBeInstanceOf(Error);
    expect(lost.name).toBe('ClaimLost');
    const item = await w.claimed({
      jobId: null,
      dedupeKey: 'received:41',
      payload: { type: 'reaction' as const, channel: 'C0DOCS', ts: '1700000000.000100', name: 'eyes' },
    });
    await expect(createSender(w.sendDeps()).send(item, async () => false)).rejects.toBeInstanceOf(ClaimLost);
  });
});
