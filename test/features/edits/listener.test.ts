import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { messageDeleted, messageEdited } from '../../../src/features/edits/listener.js';
import type { JobRecord } from '../../../src/store/types.js';
import { CHANNEL, HELPER, REPLY_TS } from '../../helpers/job-world.js';
import {
  boltEventArgs,
  createListenerWorld,
  type ListenerWorld,
  REPLY_TEXT,
} from '../../helpers/listener-deps.js';
import { BOT_USER_ID } from '../../helpers/slack-stand-in.js';

type Args = Parameters<ReturnType<typeof messageEdited>>[0];
type DeleteArgs = Parameters<ReturnType<typeof messageDeleted>>[0];

let w: ListenerWorld;
let job: JobRecord;
type WaitingReply = Awaited<ReturnType<ListenerWorld['jobWithWaitingReply']>>;
let reply: WaitingReply['reply'];
let markSent: WaitingReply['markSent'];
/** A listener's world with an active job and `HELPER`'s reply in its thread, still waiting. */
async function build(options: { socketMode?: boolean } = {}) {
  w = createListenerWorld({}, options);
  ({ job, reply, markSent } = await w.jobWithWaitingReply());
}
beforeEach(() => build());
afterEach(() => w.stop());

/** Calls the edit's listener with Bolt's arguments for an edit of the reply. */
function edit(message: Record<string, unknown> = {}, previous = REPLY_TEXT) {
  const event = {
    type: 'message',
    subtype: 'message_changed',
    channel: CHANNEL,
    ts: '1700000600.000600',
    event_ts: '1700000600.000600',
    message: {
      type: 'message',
      user: HELPER,
      text: 'Also cover the CLI',
      ts: REPLY_TS,
      thread_ts: job.threadTs,
      edited: { user: HELPER, ts: '1700000600.000600' },
      ...message,
    },
    previous_message: { type: 'message', user: HELPER, ts: REPLY_TS, text: previous },
  };
  return messageEdited(w.deps)(boltEventArgs<Args>(event));
}

describe('an edit of a reply', () => {
  it('replaces the waiting reply’s text before the listener returns', async () => {
    await edit();
    expect(await reply()).toMatchObject({ state: 'pending', prompt: 'Also cover the CLI' });
    expect(w.outboxKeys()).toEqual([]);
  });

  it('once the reply is sent, queues one private note for its author before returning', async () => {
    const run = await markSent();
    await edit();
    await edit();
    expect(w.outboxKeys()).toEqual([`edited-late:${run?.id}:1700000600.000600`]);
    expect(w.outbox()[0]?.payload).toMatchObject({ type: 'ephemeral', user: HELPER, threadTs: job.threadTs });
    expect((await reply())?.prompt).toBe('Also cover the SDK');
  });

  it.each([
    ['an app’s edit', { bot_id: 'B0OTHERAPP' }, 'Also cover the SDK'],
    ['the bot’s own edit', { user: BOT_USER_ID }, 'Also cover the SDK'],
    ['an unfurl', { text: 'Also cover the SDK' }, 'Also cover the SDK'],
    ['an edit of someone else’s message', { user: 'U0OTHER' }, 'Also cover the SDK'],
  ])('ignores %s', async (_what, message, previous) => {
    await edit(message, previous);
    expect((await reply())?.prompt).toBe('Also cover the SDK');
    expect(w.outboxKeys()).toEqual([]);
  });

  describe('when the store cannot record it', () => {
    // The revised text is written with the outbox writes (a change that expects the reply still waiting).
    const failing = () =>
      vi.spyOn(w.deps.outbox, 'applyQueued').mockRejectedValue(new Error('disk I/O error'));

    it('over HTTP, fails the event so Slack delivers it again', async () => {
      failing();
      await expect(edit()).rejects.toThrow('disk I/O error');
      expect(w.slack.postEphemeral).not.toHaveBeenCalled();
    });

    it('in Socket Mode, tells the author privately that the edit was not recorded', async () => {
      await w.stop();
      await build({ socketMode: true });
      failing();
      await edit();
      await w.idle();
      expect(w.slack.postEphemeral).toHaveBeenCalledOnce();
      expect(String(w.slack.postEphemeral.mock.calls[0]?.[0]?.text)).toContain('could not record your edit');
    });
  });
});

/** Calls the deletion's listener with Bolt's arguments for the deletion of the reply. */
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
  return messageDeleted(w.deps)(boltEventArgs<DeleteArgs>(event));
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
