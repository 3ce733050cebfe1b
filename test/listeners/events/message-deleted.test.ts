import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { messageDeleted } from '../../../src/listeners/events/message-deleted.js';
import type { JobRecord } from '../../../src/store/types.js';
import { TEAM } from '../../helpers/fake-network.js';
import { CHANNEL } from '../../helpers/job-world.js';
import { boltEventArgs, createListenerWorld, type ListenerWorld } from '../../helpers/listener-deps.js';

type Args = Parameters<ReturnType<typeof messageDeleted>>[0];

const HELPER = 'U0HELPER';
const REPLY_TS = '1700000500.000500';
let w: ListenerWorld;
let job: JobRecord;
beforeEach(async () => {
  w = createListenerWorld();
  job = (await w.activeJob()).job;
  await w.jobs.acceptReply({
    teamId: TEAM,
    channelId: CHANNEL,
    threadTs: job.threadTs ?? '',
    messageTs: REPLY_TS,
    userId: HELPER,
    text: 'Also cover the SDK',
  });
});
afterEach(() => w.stop());

/** Calls the listener with Bolt's arguments for the deletion of the reply. */
function remove(previous: Record<string, unknown> = {}) {
  const event = {
    type: 'message',
    subtype: 'message_deleted',
    channel: CHANNEL,
    ts: '1700000600.000600',
    deleted_ts: REPLY_TS,
    previous_message: {
      type: 'message',
      user: HELPER,
      ts: REPLY_TS,
      thread_ts: job.threadTs,
      text: 'x',
      ...previous,
    },
  };
  return messageDeleted(w.deps)(boltEventArgs<Args>(event));
}
const reply = async () => (await w.runs(job.id)).find((r) => r.messageTs === REPLY_TS);

describe('a deletion of a reply', () => {
  it('withdraws the waiting reply before the listener returns, without a note', async () => {
    await remove();
    expect(await reply()).toMatchObject({ state: 'failed', error: 'withdrawn' });
    expect(w.outboxKeys()).toEqual([]);
  });

  it('once the reply is sent, queues one private note for its author', async () => {
    const run = await reply();
    await w.store.apply({ jobId: job.id, run: { id: run?.id ?? 0, patch: { state: 'sent' } } }, Date.now());
    await remove();
    await remove();
    expect(w.outboxKeys()).toEqual([`deleted-late:${run?.id}`]);
  });

  it.each([
    ['an app’s message', { bot_id: 'B0OTHERAPP' }],
    ['someone else’s message', { user: 'U0OTHER' }],
  ])('ignores the deletion of %s', async (_what, previous) => {
    await remove(previous);
    expect((await reply())?.state).toBe('pending');
    expect(w.outboxKeys()).toEqual([]);
  });
});
