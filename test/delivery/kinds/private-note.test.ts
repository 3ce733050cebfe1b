import { beforeEach, describe, expect, it } from 'vitest';
import { privateNote } from '../../../src/delivery/kinds/private-note.js';
import { createSender, type Sender } from '../../../src/delivery/outbox-registry.js';
import { md } from '../../../src/slack/mrkdwn.js';
import { useDeliveryWorld } from '../../helpers/delivery-world.js';

const claimCovers = async () => true;
const w = useDeliveryWorld();
let sender: Sender;
beforeEach(() => {
  sender = createSender(w.sendDeps());
});

const ROOT = '1700000000.000100';

describe('a private note', () => {
  it('tell a person privately through a response_url while there is one, else by an ephemeral note', () => {
    const to = { channelId: 'C0DOCS', userId: 'U0ALICE', threadTs: '1.0', responseUrl: null };
    expect(privateNote(null, 'refused:7', to, md`no`)).toEqual({
      jobId: null,
      dedupeKey: 'refused:7',
      payload: { type: 'ephemeral', channel: 'C0DOCS', user: 'U0ALICE', threadTs: '1.0', text: 'no' },
    });
    const url = 'https://hooks.slack.com/commands/T0TEST/1/not-a-real-secret';
    expect(privateNote(7, 'refused:7', { ...to, responseUrl: url }, md`no`).payload).toEqual({
      type: 'respond',
      responseUrl: url,
      text: 'no',
      fallback: { channel: 'C0DOCS', user: 'U0ALICE' },
    });
  });

  it('answers a command through its response_url, privately', async () => {
    const responseUrl = w.slack.responseUrl('cmd-1');
    const item = await w.claimed({
      jobId: null,
      dedupeKey: 'refused:1',
      payload: {
        type: 'respond' as const,
        responseUrl,
        text: 'Not here',
        fallback: { channel: 'C0DOCS', user: 'U0ALICE' },
      },
    });
    await sender.send(item, claimCovers);
    expect(w.slack.responses).toEqual([
      {
        path: '/respond/cmd-1',
        body: { response_type: 'ephemeral', replace_original: false, text: 'Not here' },
      },
    ]);
    expect(w.slack.callsTo('chat.postEphemeral')).toEqual([]);
  });

  it('says it privately in the channel once the response_url expired, and fails without a fallback', async () => {
    const responseUrl = w.slack.responseUrl('expired-1');
    const payload = { type: 'respond' as const, responseUrl, text: 'Not here' };
    const item = await w.claimed({
      jobId: null,
      dedupeKey: 'refused:2',
      payload: { ...payload, fallback: { channel: 'C0DOCS', user: 'U0ALICE' } },
    });
    await sender.send(item, claimCovers);
    expect(w.slack.callsTo('chat.postEphemeral').map((c) => c.args)).toEqual([
      expect.objectContaining({ channel: 'C0DOCS', user: 'U0ALICE', text: 'Not here' }),
    ]);
    await expect(sender.send({ ...item, payload }, claimCovers)).rejects.toMatchObject({
      code: 'expired_url',
    });
  });

  it('sends an ephemeral note in its thread, or in the channel', async () => {
    const note = { type: 'ephemeral' as const, channel: 'C0DOCS', user: 'U0ALICE', text: 'Held' };
    await sender.send(
      await w.claimed({ jobId: null, dedupeKey: 'held:job:1', payload: { ...note, threadTs: ROOT } }),
      claimCovers,
    );
    await sender.send(
      await w.claimed({ jobId: null, dedupeKey: 'held:job:2', payload: { ...note, threadTs: null } }),
      claimCovers,
    );
    const sent = w.slack.callsTo('chat.postEphemeral').map((c) => c.args);
    expect(sent[0]).toMatchObject({ channel: 'C0DOCS', user: 'U0ALICE', text: 'Held', thread_ts: ROOT });
    expect(sent[1]?.thread_ts).toBeUndefined();
  });
});
