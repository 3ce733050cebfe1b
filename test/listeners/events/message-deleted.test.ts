import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { messageDeleted } from '../../../src/listeners/events/message-deleted.js';
import type { JobRecord } from '../../../src/store/types.js';
import { CHANNEL } from '../../helpers/job-world.js';
import { boltEventArgs, type ListenerWorld } from '../../helpers/listener-deps.js';
import { HELPER, REPLY_TS, type WaitingReply, waitingReply } from '../../helpers/waiting-reply.js';

type Args = Parameters<ReturnType<typeof messageDeleted>>[0];

let w: ListenerWorld;
let job: JobRecord;
let reply: WaitingReply['reply'];
let markSent: WaitingReply['markSent'];
beforeEach(async () => {
  ({ w, job, reply, markSent } = await waitingReply());
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

describe('a deletion of a reply', () => {
  it('withdraws the waiting reply before the listener returns, without a note', async () => {
    await remove();
    expect(await reply()).toMatchObject({ state: 'failed', error: 'withdrawn' });
    expect(w.outboxKeys()).toEqual([]);
  });

  it('once the reply is sent, queues one private note for its author', async () => {
    const run = await markSent();
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

  it('logs a deletion naming a person that is not a user id, and changes or addresses nothing', async () => {
    await markSent();
    await remove({ user: '<!channel>' });
    expect((await reply())?.state).toBe('sent');
    expect(w.outboxKeys()).toEqual([]);
    const [line] = w.logged('warn', 'could not be read');
    expect(JSON.parse(line as string)).toMatchObject({
      what: 'deletion',
      fields: ['previous_message.user: custom'],
    });
  });
});
