import { afterEach, describe, expect, it } from 'vitest';
import { md } from '../../src/slack/mrkdwn.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { gatewayOnStandIn, outboxOnStandIn } from '../helpers/gateway-on-stand-in.js';
import { waitFor } from '../helpers/http.js';
import type { SlackStandIn } from '../helpers/slack-stand-in.js';

let slack: SlackStandIn | undefined;
afterEach(async () => {
  await slack?.close();
});

describe('status card updates', () => {
  it('sends a burst of card updates for one job as one chat.update of the latest state', async () => {
    const world = await gatewayOnStandIn();
    slack = world.slack;
    const { gateway, logger } = world;
    const store = openSqliteStore(':memory:');
    const cardTs = await gateway.postMessage({ channel: 'C0DOCS', text: md`card` });
    const { job } = await store.insertJob(
      {
        teamId: 'T0TEST',
        channelId: 'C0DOCS',
        requesterId: 'U0ALICE',
        instruction: 'Document retries',
        triggerKey: 'burst',
        responseUrl: null,
        pollIntervalMs: 1_000,
      },
      { kind: 'create', prompt: 'Document retries', authorId: 'U0ALICE', messageTs: null },
      Date.now(),
    );
    const update = {
      jobId: job.id,
      dedupeKey: null,
      payload: { type: 'update_root' as const, channel: 'C0DOCS', ts: cardTs },
    };
    // Five changes, each queuing an update in the same write; the last makes it run 5.
    for (let n = 1; n <= 5; n++)
      await store.apply(
        { jobId: job.id, job: { threadTs: cardTs, cardTs, runCount: n }, enqueue: [update] },
        Date.now(),
      );

    const outbox = outboxOnStandIn(store, { gateway, logger });
    outbox.start();
    try {
      await waitFor('every update done', async () => (await store.latestCardUpdate(job.id)) === undefined);
    } finally {
      await outbox.stop();
    }
    const updates = slack.callsTo('chat.update');
    expect(updates).toHaveLength(1);
    expect(JSON.stringify(updates[0]?.args.blocks)).toContain('*Runs*\\n5');
    expect(slack.invalid).toEqual([]);
    await store.close();
  });
});
