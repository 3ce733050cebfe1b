import { afterEach, describe, expect, it, vi } from 'vitest';
import { accessWhereAsked } from '../../src/jobs/access-where-asked.js';
import { guest, TEAM } from '../helpers/fake-network.js';
import { createJobWorld, type JobWorld } from '../helpers/job-world.js';

const ALLOWED = 'C0ALLOWED';
const OTHER = 'C0ELSEWHERE';
const PANE = 'D0PANE';
const PRESSER = { userId: 'U0PRESSER', teamId: TEAM };

let w: JobWorld | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await w?.store.close();
  w = undefined;
});

/** A world where only `ALLOWED` may be used, direct messages following that list. */
function world(env: Record<string, string> = {}): JobWorld {
  w = createJobWorld({ ALLOWED_CHANNEL_IDS: ALLOWED, ...env });
  return w;
}

describe('accessWhereAsked', () => {
  it('allows a member of the workspace where the job was asked', async () => {
    const { access } = world();
    const job = { channelId: ALLOWED, contextChannelId: null };
    expect(await accessWhereAsked(access, job, PRESSER, 1_500)).toEqual({ allowed: true });
  });

  it('refuses where the job’s channel is not one the bot may be used in', async () => {
    const { access } = world();
    const job = { channelId: OTHER, contextChannelId: null };
    expect(await accessWhereAsked(access, job, PRESSER, 1_500)).toEqual({
      allowed: false,
      reason: 'channel',
    });
  });

  it('in the assistant pane, checks the channel recorded with the job, not only the pane', async () => {
    const { access } = world();
    const besideAllowed = { channelId: PANE, contextChannelId: ALLOWED };
    const besideOther = { channelId: PANE, contextChannelId: OTHER };
    expect(await accessWhereAsked(access, besideAllowed, PRESSER, 1_500)).toEqual({ allowed: true });
    expect(await accessWhereAsked(access, besideOther, PRESSER, 1_500)).toEqual({
      allowed: false,
      reason: 'channel',
    });
  });

  it('refuses someone of another workspace, and a guest', async () => {
    const { access, slack } = world();
    const job = { channelId: ALLOWED, contextChannelId: null };
    expect(await accessWhereAsked(access, job, { userId: 'U0OUTSIDER', teamId: 'T0OTHER' }, 1_500)).toEqual({
      allowed: false,
      reason: 'team',
    });
    slack.userInfo.mockResolvedValueOnce(guest());
    expect(await accessWhereAsked(access, job, { userId: 'U0GUEST', teamId: TEAM }, 1_500)).toEqual({
      allowed: false,
      reason: 'guest',
    });
  });

  it('fails closed as unverified when Slack does not say who the person is within the time given', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { access, slack } = world();
    slack.userInfo.mockReturnValue(new Promise(() => {}));
    let answer: unknown;
    void accessWhereAsked(access, { channelId: ALLOWED, contextChannelId: null }, PRESSER, 1_500).then(
      (a) => {
        answer = a;
      },
    );
    await vi.advanceTimersByTimeAsync(1_499);
    expect(answer).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(answer).toEqual({ allowed: false, reason: 'unverified' });
  });

  it('fails closed as unverified when the check itself fails', async () => {
    const failing = { check: vi.fn(async () => Promise.reject(new Error('store unavailable'))) };
    const job = { channelId: ALLOWED, contextChannelId: 'C0BESIDE' };
    expect(await accessWhereAsked(failing, job, PRESSER, 1_500)).toEqual({
      allowed: false,
      reason: 'unverified',
    });
    expect(failing.check).toHaveBeenCalledWith({
      teamId: TEAM,
      channelId: ALLOWED,
      userId: PRESSER.userId,
      contextChannelId: 'C0BESIDE',
    });
  });
});
