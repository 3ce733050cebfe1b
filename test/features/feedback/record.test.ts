import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type FeedbackOutcome,
  type FeedbackRequest,
  recordVote,
} from '../../../src/features/feedback/record.js';
import { SlackCallError } from '../../../src/slack/caller.js';
import { guest, member, TEAM } from '../../helpers/fake-network.js';
import { CHANNEL, createJobWorld, type JobWorld } from '../../helpers/job-world.js';

let w: JobWorld;
let record: (request: FeedbackRequest) => Promise<FeedbackOutcome>;
const metrics = { feedback: vi.fn() };
/** A world with these settings, and votes recorded on it. */
function world(env: Record<string, string> = {}) {
  w = createJobWorld(env);
  metrics.feedback.mockClear();
  record = (request) =>
    recordVote({ store: w.store, access: w.access, metrics, logger: w.ctx.logger, now: w.ctx.now }, request);
}
beforeEach(() => world());
/** The world again with other settings (the current one's store closed). */
async function reworld(env: Record<string, string>) {
  await w.store.close();
  world(env);
}
afterEach(async () => {
  await w.store.close();
});

const totals = () => w.store.feedbackTotals();

describe('recordVote', () => {
  it('records one vote per person and outcome: the same press again changes nothing', async () => {
    const { job, run } = await w.jobWithOutcome();
    const press = {
      jobId: job.id,
      runSeq: run.seq,
      value: 'positive' as const,
      userId: 'U0READER',
      teamId: TEAM,
      channelId: CHANNEL,
    };
    expect(await record(press)).toBe('recorded');
    expect(await record(press)).toBe('unchanged');
    expect(await totals()).toEqual({ positive: 1, negative: 0, reasons: 0 });
    expect(metrics.feedback).toHaveBeenCalledTimes(1);
    expect(metrics.feedback).toHaveBeenCalledWith('positive');
  });

  it('lets a person change their vote, which replaces the earlier one', async () => {
    const { job, run } = await w.jobWithOutcome();
    const press = { jobId: job.id, runSeq: run.seq, userId: 'U0READER', teamId: TEAM, channelId: CHANNEL };
    await record({ ...press, value: 'positive' });
    expect(await record({ ...press, value: 'negative' })).toBe('recorded');
    expect(await totals()).toEqual({ positive: 0, negative: 1, reasons: 0 });
    expect(metrics.feedback.mock.calls).toEqual([['positive'], ['negative']]);
  });

  it('counts each person’s vote separately', async () => {
    const { job, run } = await w.jobWithOutcome();
    for (const userId of ['U0ONE', 'U0TWO'])
      await record({
        jobId: job.id,
        runSeq: run.seq,
        value: 'negative',
        userId,
        teamId: TEAM,
        channelId: CHANNEL,
      });
    expect(await totals()).toEqual({ positive: 0, negative: 2, reasons: 0 });
  });

  it('ignores a press naming no outcome: an unknown job, another channel, an unknown run, a run not finished', async () => {
    const { job, run } = await w.jobWithOutcome();
    const { job: running, run: unfinished } = await w.activeJob({ channelId: 'C0OTHER' });
    const vote = { value: 'positive' as const, userId: 'U0READER', teamId: TEAM, channelId: CHANNEL };
    expect(await record({ ...vote, jobId: 9_999, runSeq: 1 })).toBe('unknown');
    expect(await record({ ...vote, jobId: job.id, runSeq: run.seq, channelId: 'C0ELSEWHERE' })).toBe(
      'unknown',
    );
    expect(await record({ ...vote, jobId: job.id, runSeq: run.seq + 1 })).toBe('unknown');
    expect(
      await record({
        ...vote,
        jobId: running.id,
        runSeq: unfinished.seq,
        channelId: 'C0OTHER',
      }),
    ).toBe('unknown');
    expect(await totals()).toEqual({ positive: 0, negative: 0, reasons: 0 });
    expect(metrics.feedback).not.toHaveBeenCalled();
  });
});

describe('who may vote', () => {
  /** A press on the finished outcome (made on the first press) by `userId`, from `teamId`. */
  let outcome: Awaited<ReturnType<JobWorld['jobWithOutcome']>> | undefined;
  beforeEach(() => {
    outcome = undefined;
  });
  async function pressBy(userId: string, teamId: string | undefined) {
    outcome ??= await w.jobWithOutcome();
    const { job, run } = outcome;
    return record({
      jobId: job.id,
      runSeq: run.seq,
      value: 'positive',
      userId,
      teamId,
      channelId: CHANNEL,
    });
  }

  it.each([
    ['a person of another workspace', 'U0EVE', 'T0OTHER', 'team'],
    ['a Slack Connect person whose own workspace Slack names', 'U0EXT', undefined, 'team'],
    ['a guest', 'U0GUEST', TEAM, 'guest'],
    ['a person Slack cannot say anything about now', 'U0FLAKY', TEAM, 'unverified'],
  ])('does not count %s: nothing recorded, no metric, and why', async (_who, userId, teamId, reason) => {
    w.slack.userInfo.mockImplementation(async (id: string) => {
      if (id === 'U0EXT') return { ...member(), teamId: 'T0OTHERORG' };
      if (id === 'U0GUEST') return guest();
      if (id === 'U0FLAKY') throw new SlackCallError('users.info', 'ratelimited');
      return member();
    });
    expect(await pressBy(userId, teamId)).toEqual({ refused: { allowed: false, reason } });
    expect(await totals()).toEqual({ positive: 0, negative: 0, reasons: 0 });
    expect(metrics.feedback).not.toHaveBeenCalled();
    expect(w.logs.filter((l) => l.includes('feedback not counted'))).toHaveLength(1);
  });

  it('does not count a person outside ALLOWED_USER_IDS, nor a press where the channel is no longer served', async () => {
    await reworld({ ALLOWED_USER_IDS: 'U0READER', ALLOWED_CHANNEL_IDS: 'C0ELSEWHERE' });
    expect(await pressBy('U0MALLORY', TEAM)).toMatchObject({ refused: { reason: 'channel' } });
    await reworld({ ALLOWED_USER_IDS: 'U0READER' });
    outcome = undefined;
    expect(await pressBy('U0MALLORY', TEAM)).toMatchObject({ refused: { reason: 'user' } });
    expect(await pressBy('U0READER', TEAM)).toBe('recorded');
    expect(metrics.feedback).toHaveBeenCalledTimes(1);
  });

  it('counts the vote of a person over their hourly limit: a vote is no instruction', async () => {
    await reworld({ MAX_INSTRUCTIONS_PER_USER_PER_HOUR: '1' });
    const { run } = await w.insertJob({ requesterId: 'U0READER' });
    expect(await w.access.reserve(run.id)).toEqual({ allowed: true });
    expect(await w.access.room('U0READER', null)).toMatchObject({ allowed: false, reason: 'rate' });
    expect(await pressBy('U0READER', TEAM)).toBe('recorded');
  });
});
