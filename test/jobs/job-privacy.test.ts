import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { JobPrivacy } from '../../src/domain/privacy.js';
import { createJobPrivacyChecks, type JobPrivacyChecks } from '../../src/jobs/job-privacy.js';
import { createJobWorld, type JobWorld } from '../helpers/job-world.js';

let w: JobWorld;
let privacy: JobPrivacyChecks;
let closed: boolean;
beforeEach(() => {
  w = createJobWorld();
  closed = false;
  privacy = createJobPrivacyChecks(w.ctx);
});
afterEach(async () => {
  if (!closed) await w.store.close();
});

/** Slack's answer for every channel: who can read it, or no answer. */
function slackSays(answer: 'public' | 'private' | 'fails') {
  if (answer === 'fails') w.slack.conversationFacts.mockRejectedValue(new Error('ratelimited'));
  else
    w.slack.conversationFacts.mockResolvedValue({
      isMember: true,
      isArchived: false,
      isDirect: false,
      isPrivate: answer === 'private',
    });
}

const jobIn = async (recorded: JobPrivacy, channelId = 'C0TEST') =>
  (await w.insertJob({ privacy: recorded, channelId })).job;
const stored = async (id: number) => (await w.job(id)).privacy;

describe('settle', () => {
  it('records what Slack says of a channel the request did not describe', async () => {
    slackSays('private');
    const hidden = await jobIn('unknown');
    expect((await privacy.settle(hidden)).privacy).toBe('private');
    expect(await stored(hidden.id)).toBe('private');

    slackSays('public');
    const open = await jobIn('unknown', 'C0OPEN');
    expect((await privacy.settle(open)).privacy).toBe('public');
    expect(await stored(open.id)).toBe('public');
  });

  it('leaves the job unknown (treated as private) when Slack does not say', async () => {
    slackSays('fails');
    const job = await jobIn('unknown');
    expect((await privacy.settle(job)).privacy).toBe('unknown');
    expect(await stored(job.id)).toBe('unknown');
  });

  it('asks nothing of a direct message, or of a job whose request said', async () => {
    for (const job of [
      await jobIn('unknown', 'D0DIRECT'),
      await jobIn('public', 'C0A'),
      await jobIn('private', 'C0B'),
    ])
      expect(await privacy.settle(job)).toBe(job);
    expect(w.slack.conversationFacts).not.toHaveBeenCalled();
  });

  it('uses a private answer it could not record, but never an unrecorded public one', async () => {
    const a = await jobIn('unknown', 'C0A');
    const b = await jobIn('unknown', 'C0B');
    await w.store.close();
    closed = true;
    slackSays('private');
    expect((await privacy.settle(a)).privacy).toBe('private');
    slackSays('public');
    expect((await privacy.settle(b)).privacy).toBe('unknown');
    expect(w.logs.filter((l) => l.includes('could not record who can read'))).toHaveLength(2);
  });
});

describe('settleAlong', () => {
  it('hands an answer in over to the caller’s own write, and records one not taken itself', async () => {
    slackSays('private');
    const taken = await jobIn('unknown', 'C0A');
    const along = privacy.settleAlong(taken);
    // Not in yet: nothing to take, and `done` records it once it is.
    expect(along.take()).toBeUndefined();
    await along.done();
    expect(await stored(taken.id)).toBe('private');

    const handed = await jobIn('unknown', 'C0B');
    const mine = privacy.settleAlong(handed);
    await new Promise((resolve) => setImmediate(resolve));
    expect(mine.take()).toBe('private');
    await mine.done();
    // Taken: the caller records it; `done` writes nothing.
    expect(await stored(handed.id)).toBe('unknown');
  });

  it('records an answer that comes after the caller took none as soon as it comes', async () => {
    let answer: (facts: {
      isMember: boolean;
      isArchived: boolean;
      isDirect: boolean;
      isPrivate: boolean;
    }) => void = () => undefined;
    w.slack.conversationFacts.mockReturnValueOnce(
      new Promise((resolve) => {
        answer = resolve;
      }),
    );
    const job = await jobIn('unknown', 'C0LATE');
    const along = privacy.settleAlong(job);
    expect(along.take()).toBeUndefined();
    answer({ isMember: true, isArchived: false, isDirect: false, isPrivate: false });
    // Recorded as it comes, not when the caller is done (that may be seconds later).
    await vi.waitFor(async () => expect(await stored(job.id)).toBe('public'));
    await along.done();
    expect(await stored(job.id)).toBe('public');
  });

  it('has nothing to hand over or record where settle asks nothing', async () => {
    const said = await jobIn('public', 'C0A');
    const along = privacy.settleAlong(said);
    await along.done();
    expect(along.take()).toBeUndefined();
    expect(await stored(said.id)).toBe('public');
    expect(w.slack.conversationFacts).not.toHaveBeenCalled();
  });
});

describe('recheck', () => {
  it('keeps a public job public while Slack still says so', async () => {
    slackSays('public');
    const job = await jobIn('public');
    expect(await privacy.recheck(job)).toBe(job);
  });

  it('records a channel made private since the job was asked', async () => {
    slackSays('private');
    const job = await jobIn('public');
    expect((await privacy.recheck(job)).privacy).toBe('private');
    expect(await stored(job.id)).toBe('private');
    expect(w.logs.some((l) => l.includes('made private after it was asked'))).toBe(true);
  });

  it('treats a channel Slack cannot describe as private for this rendering only', async () => {
    slackSays('fails');
    const job = await jobIn('public');
    expect((await privacy.recheck(job)).privacy).toBe('unknown');
    expect(await stored(job.id)).toBe('public');
  });

  it('asks nothing about a job not recorded as public', async () => {
    slackSays('public');
    for (const recorded of ['private', 'unknown', 'pane', 'direct'] as const) {
      const job = await jobIn(recorded, `C0${recorded.toUpperCase()}`);
      expect(await privacy.recheck(job)).toBe(job);
    }
    expect(w.slack.conversationFacts).not.toHaveBeenCalled();
  });

  it('never rejects when the store cannot record the stricter answer', async () => {
    const job = await jobIn('public');
    await w.store.close();
    closed = true;
    slackSays('private');
    expect((await privacy.recheck(job)).privacy).toBe('private');
  });
});
