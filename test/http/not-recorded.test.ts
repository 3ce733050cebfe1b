import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { text } from '../../src/blocks/messages.js';
import { notRecorded } from '../../src/http/not-recorded.js';
import { md } from '../../src/slack/mrkdwn.js';
import { CHANNEL, REQUESTER } from '../helpers/job-world.js';
import { createListenerWorld, type ListenerWorld } from '../helpers/listener-deps.js';

let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld();
});
afterEach(() => w.stop());

const failure = new Error('SQLITE_BUSY: database is locked');
const where = { channel: CHANNEL, user: REQUESTER, threadTs: '1700000000.000001' };

describe('notRecorded', () => {
  it('over HTTP, on a first delivery or an early retry: passes the error on so Slack delivers it again', () => {
    for (const retryNum of [undefined, 1, 2]) {
      expect(() => notRecorded(w.deps, failure, { retryNum }, where)).toThrow(failure);
    }
    expect(w.deps.tasks.run).not.toHaveBeenCalled();
    const lines = w.logged('error', 'could not record an instruction');
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ redeliveryExpected: true });
  });

  it('on Slack’s last retry: tells the person privately, in the thread, that nothing was recorded', async () => {
    notRecorded(w.deps, failure, { retryNum: 3 }, where);
    await w.idle();
    expect(w.slack.postEphemeral).toHaveBeenCalledWith({ ...where, text: text.notRecorded() });
    expect(JSON.parse(w.logged('error', 'could not record')[0] as string)).toMatchObject({
      redeliveryExpected: false,
    });
  });

  it('in Socket Mode (acknowledged before the listener ran): tells the person at once, with the note given', async () => {
    await w.stop();
    w = createListenerWorld({}, { socketMode: true });
    // A surface's own words (a stop's: press stop again), not the instruction's default.
    const note = md`:warning: I could not record your stop just now.`;
    notRecorded(w.deps, failure, {}, { channel: CHANNEL, user: REQUESTER }, note);
    await w.idle();
    expect(w.slack.postEphemeral).toHaveBeenCalledWith({ channel: CHANNEL, user: REQUESTER, text: note });
  });

  it('when Slack did not say whose it was: logs it, and tells no one', async () => {
    notRecorded(w.deps, failure, { retryNum: 3 }, { channel: CHANNEL, user: undefined });
    await w.idle();
    expect(w.deps.tasks.run).not.toHaveBeenCalled();
    expect(w.logged('error', 'could not record an instruction')).toHaveLength(1);
  });

  it('with no background slot free: the log is the note’s only trace, and names where it was', () => {
    vi.mocked(w.deps.tasks.run).mockReturnValueOnce(false);
    notRecorded(w.deps, failure, { retryNum: 5 }, where);
    expect(w.slack.postEphemeral).not.toHaveBeenCalled();
    const [line] = w.logged('error', 'no room to tell the person');
    expect(JSON.parse(line as string)).toMatchObject({ channel: CHANNEL, user: REQUESTER });
  });
});
