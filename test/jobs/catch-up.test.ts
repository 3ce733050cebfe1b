import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createReplyCatchUp } from '../../src/jobs/catch-up.js';
import type { ReplyRequest } from '../../src/jobs/requests.js';
import type { ThreadMessage } from '../../src/slack/message-listing.js';

import { BOT_ID, TEAM } from '../helpers/fake-network.js';
import { CHANNEL, createJobWorld, type JobWorld } from '../helpers/job-world.js';
import { BOT_USER_ID } from '../helpers/slack-stand-in.js';

const THREAD = '1700000000.000001';
const AFTER = '1700000000.000100';
const BEFORE = '1700000000.000900';

const message = (ts: string, fields: Partial<ThreadMessage> = {}): ThreadMessage => ({
  ts,
  user: 'U0HELPER',
  botId: undefined,
  username: undefined,
  text: 'Also cover the SDK',
  eventType: undefined,
  team: TEAM,
  subtype: undefined,
  ...fields,
});

let w: JobWorld;
beforeEach(() => {
  w = createJobWorld();
});
afterEach(async () => {
  await w.store.close();
});

/** Catch-up whose accept and process record what they were given; `known` replies are already recorded. */
function catchUpRecording(known: string[] = []) {
  let next = 100;
  const accept = vi.fn(async (r: ReplyRequest) => (known.includes(r.messageTs) ? undefined : next++));
  const process = vi.fn(async (_runId: number, _teamId: string | undefined) => {});
  const catchUp = createReplyCatchUp({ ...w.ctx, accept, process });
  return { catchUp, accept, process };
}

describe('catch-up of replies posted before the job was recorded', () => {
  it('reads only the thread between the two messages and records each human reply in it, in order', async () => {
    const { job } = await w.activeJob();
    w.slack.threadMessages.mockResolvedValue([
      message('1700000000.000200', { text: 'Also cover the SDK' }),
      message('1700000000.000300', { user: 'U0OTHER', team: undefined, text: 'And the CLI' }),
    ]);
    const { catchUp, accept, process } = catchUpRecording();
    await catchUp(job, AFTER, BEFORE);

    expect(w.slack.threadMessages).toHaveBeenCalledWith(
      expect.objectContaining({ channel: CHANNEL, threadTs: THREAD, oldest: AFTER, latest: BEFORE }),
    );
    expect(accept.mock.calls.map(([r]) => r)).toEqual([
      {
        teamId: TEAM,
        channelId: CHANNEL,
        threadTs: THREAD,
        messageTs: '1700000000.000200',
        userId: 'U0HELPER',
        text: 'Also cover the SDK',
      },
      // No workspace given: the job's.
      {
        teamId: job.teamId,
        channelId: CHANNEL,
        threadTs: THREAD,
        messageTs: '1700000000.000300',
        userId: 'U0OTHER',
        text: 'And the CLI',
      },
    ]);
    expect(process.mock.calls).toEqual([
      [100, TEAM],
      [101, undefined],
    ]);
  });

  it('leaves out the bounds themselves and anything outside them, whatever Slack returned', async () => {
    const { job } = await w.activeJob();
    w.slack.threadMessages.mockResolvedValue([
      message(AFTER),
      message('1700000000.000050'),
      message(BEFORE),
      message('1700000000.000950'),
    ]);
    const { catchUp, accept } = catchUpRecording();
    await catchUp(job, AFTER, BEFORE);
    expect(accept).not.toHaveBeenCalled();
  });

  it('takes no bots, no app posts, no joins, nothing of the bot’s own and no asides as replies', async () => {
    const { job } = await w.activeJob();
    w.slack.threadMessages.mockResolvedValue([
      message('1700000000.000200', { botId: BOT_ID, user: undefined }),
      message('1700000000.000210', { botId: 'B0OTHERAPP', user: 'U0APPUSER' }),
      message('1700000000.000220', { user: BOT_USER_ID }),
      message('1700000000.000230', { eventType: 'docs_agent_notice' }),
      message('1700000000.000240', { subtype: 'channel_join', text: 'joined' }),
      message('1700000000.000250', { text: '// just between us' }),
      message('1700000000.000260', { user: undefined }),
      message('1700000000.000270', { subtype: 'thread_broadcast', text: 'Broadcast reply' }),
    ]);
    const { catchUp, accept } = catchUpRecording();
    await catchUp(job, AFTER, BEFORE);
    expect(accept.mock.calls.map(([r]) => r.text)).toEqual(['Broadcast reply']);
  });

  it('takes the bot’s mention out of a reply, and in mention mode takes only replies that mention it', async () => {
    await w.store.close();
    w = createJobWorld({ FOLLOW_UP_MODE: 'mention' });
    const { job } = await w.activeJob();
    w.slack.threadMessages.mockResolvedValue([
      message('1700000000.000200', { text: 'Talking among ourselves' }),
      message('1700000000.000300', { text: `<@${BOT_USER_ID}> also the SDK` }),
    ]);
    const { catchUp, accept } = catchUpRecording();
    await catchUp(job, AFTER, BEFORE);
    expect(accept.mock.calls.map(([r]) => [r.messageTs, r.text.trim()])).toEqual([
      ['1700000000.000300', 'also the SDK'],
    ]);
  });

  it('processes only replies the store had not recorded yet', async () => {
    const { job } = await w.activeJob();
    w.slack.threadMessages.mockResolvedValue([message('1700000000.000200'), message('1700000000.000300')]);
    const { catchUp, accept, process } = catchUpRecording(['1700000000.000200']);
    await catchUp(job, AFTER, BEFORE);
    expect(accept).toHaveBeenCalledTimes(2);
    expect(process.mock.calls).toEqual([[100, TEAM]]);
  });

  it('does nothing for a job without a thread', async () => {
    const { job } = await w.insertJob();
    const { catchUp, accept } = catchUpRecording();
    await catchUp({ ...job, threadTs: null }, AFTER, BEFORE);
    expect(w.slack.threadMessages).not.toHaveBeenCalled();
    expect(accept).not.toHaveBeenCalled();
  });

  it('when Slack cannot give the thread, logs it and lets the job go on', async () => {
    const { job } = await w.activeJob();
    w.slack.threadMessages.mockRejectedValue(new Error('ratelimited'));
    const { catchUp, accept } = catchUpRecording();
    await expect(catchUp(job, AFTER, BEFORE)).resolves.toBeUndefined();
    expect(accept).not.toHaveBeenCalled();
    expect(w.logs.some((l) => l.includes('could not read the thread for replies'))).toBe(true);
  });
});

describe('catch-up with the real replies', () => {
  it('records each reply as a follow-up once, however often the thread is read', async () => {
    const { job } = await w.activeJob();
    w.slack.threadMessages.mockResolvedValue([message('1700000000.000200'), message('1700000000.000300')]);
    const parts = w.parts();
    try {
      await parts.catchUp(job, AFTER, BEFORE);
      await parts.catchUp(job, AFTER, BEFORE);
      await w.background();
      const followUps = (await w.runs(job.id)).filter((r) => r.kind === 'follow_up');
      expect(followUps.map((r) => r.messageTs)).toEqual(['1700000000.000200', '1700000000.000300']);
    } finally {
      parts.followUps.stop();
      parts.verification.stop();
    }
  });
});
