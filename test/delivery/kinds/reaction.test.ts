import { beforeEach, describe, expect, it } from 'vitest';
import { RECEIVED_REACTION, receivedReaction } from '../../../src/delivery/kinds/reaction.js';
import { createSender, type Sender } from '../../../src/delivery/outbox-registry.js';
import type { JobRecord, RunRecord } from '../../../src/store/types.js';
import { useDeliveryWorld } from '../../helpers/delivery-world.js';

const claimCovers = async () => true;
const w = useDeliveryWorld();
let sender: Sender;
beforeEach(() => {
  sender = createSender(w.sendDeps());
});

const job = { id: 7, channelId: 'C0DOCS' } as JobRecord;
const run = (id: number, seq: number, messageTs: string | null) => ({ id, seq, messageTs }) as RunRecord;

describe('an emoji on a message', () => {
  it('mark a follow-up the agent accepted, once per run, and never an instruction without a message', () => {
    expect(receivedReaction(job, run(41, 2, '1700000000.000200'))).toEqual([
      {
        jobId: 7,
        dedupeKey: 'received:41',
        payload: { type: 'reaction', channel: 'C0DOCS', ts: '1700000000.000200', name: RECEIVED_REACTION },
      },
    ]);
    expect(RECEIVED_REACTION).toBe('eyes');
    expect(receivedReaction(job, run(40, 1, null))).toEqual([]);
  });

  it('puts an emoji on a message, once however often it is sent', async () => {
    const item = await w.claimed({
      jobId: null,
      dedupeKey: 'received:41',
      payload: { type: 'reaction' as const, channel: 'C0DOCS', ts: '1700000000.000300', name: 'eyes' },
    });
    await sender.send(item, claimCovers);
    await sender.send(item, claimCovers);
    expect(w.slack.reactionsOn('C0DOCS', '1700000000.000300')).toEqual(['eyes']);
  });
});
