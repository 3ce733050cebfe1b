import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { text } from '../../src/blocks/messages.js';
import { refusalText } from '../../src/blocks/refusal-texts.js';
import {
  accessWhereAsked,
  createInstructionChecks,
  createVerificationWaits,
  type InstructionChecks,
  STEP_VERIFICATION_LIMIT_MS,
  VERIFICATION_LIMIT_MS,
  VERIFICATION_MAX_RETRY_MS,
  type VerificationWait,
  type VerificationWaits,
} from '../../src/jobs/instruction-checks.js';
import { createJobContext } from '../../src/jobs/job-context.js';
import { guest, TEAM } from '../helpers/fake-network.js';
import { CHANNEL, createJobWorld, type JobWorld, REQUESTER } from '../helpers/job-world.js';

describe('the instruction checks', () => {
  let w: JobWorld;
  let verification: VerificationWaits;
  let checks: InstructionChecks;
  const metrics = { instruction: vi.fn(), runFinished: vi.fn(), feedback: vi.fn() };
  afterEach(async () => {
    verification.stop();
    await w.store.close();
  });

  function setUp(env: Record<string, string> = {}) {
    w = createJobWorld({ MAX_PROMPT_CHARS: '40', ...env });
    metrics.instruction.mockClear();
    const ctx = createJobContext({ ...w.deps, metrics });
    verification = createVerificationWaits({ ...ctx, firstRetryMs: 60_000 });
    checks = createInstructionChecks(ctx, verification);
  }

  const who = (fields: Partial<Parameters<InstructionChecks['refusal']>[2]> = {}) => ({
    teamId: TEAM,
    channelId: CHANNEL,
    userId: REQUESTER,
    contextChannelId: null,
    ...fields,
  });
  /** Uses of the last hour counted for the requester. */
  const uses = async () => (await w.store.recentInstructions(REQUESTER, w.clock.at - 3_600_000)).count;

  describe('refusal', () => {
    it('lets an instruction within the limits go, counting it as one use', async () => {
      setUp();
      const { run } = await w.insertJob();
      expect(await checks.refusal(run.id, 'Document the limits', who(), 'command')).toBeUndefined();
      expect(await uses()).toBe(1);
      expect(metrics.instruction).not.toHaveBeenCalled();
    });

    it('refuses an instruction longer than the limit before asking anyone, and counts no use', async () => {
      setUp();
      const { run } = await w.insertJob();
      const refusal = await checks.refusal(run.id, 'x'.repeat(41), who(), 'mention');
      expect(refusal).toEqual({
        said: text.promptTooLong(41, 40),
        why: { reason: 'too_long', length: 41, max: 40 },
      });
      expect(metrics.instruction).toHaveBeenCalledExactlyOnceWith('mention', 'refused', 'too_long');
      expect(w.slack.userInfo).not.toHaveBeenCalled();
      expect(await uses()).toBe(0);
      // Exactly the limit is allowed.
      expect(await checks.refusal(run.id, 'x'.repeat(40), who(), 'mention')).toBeUndefined();
    });

    it('refuses where the bot may not be used, counting no use', async () => {
      setUp({ ALLOWED_CHANNEL_IDS: 'C0ALLOWED' });
      const { run } = await w.insertJob();
      const refusal = await checks.refusal(run.id, 'Document the limits', who(), 'reply');
      expect(refusal).toMatchObject({ said: refusalText({ reason: 'channel' }), why: { reason: 'channel' } });
      expect(metrics.instruction).toHaveBeenCalledExactlyOnceWith('reply', 'refused', 'channel');
      expect(await uses()).toBe(0);
      expect(w.logs.some((l) => l.includes('instruction refused'))).toBe(true);
    });

    it('checks a pane job against the channel recorded with it', async () => {
      setUp({ ALLOWED_CHANNEL_IDS: 'C0ALLOWED' });
      const { run } = await w.insertJob({ channelId: 'D0PANE' });
      const pane = { channelId: 'D0PANE' };
      expect(
        await checks.refusal(run.id, 'Go', who({ ...pane, contextChannelId: 'C0ALLOWED' }), 'direct'),
      ).toBeUndefined();
      expect(
        await checks.refusal(run.id, 'Go', who({ ...pane, contextChannelId: 'C0OTHER' }), 'direct'),
      ).toMatchObject({ why: { reason: 'channel' } });
      expect(metrics.instruction).toHaveBeenCalledExactlyOnceWith('direct', 'refused', 'channel');
    });

    it('refuses a person past their hourly limit', async () => {
      setUp({ MAX_INSTRUCTIONS_PER_USER_PER_HOUR: '1' });
      const { run: first } = await w.insertJob();
      const { run: second } = await w.insertJob({}, 'Explain webhooks');
      expect(await checks.refusal(first.id, 'Go', who(), 'command')).toBeUndefined();
      const refusal = await checks.refusal(second.id, 'Go', who(), 'command');
      expect(refusal).toMatchObject({ why: { reason: 'rate', limit: 1, retryAt: expect.any(Date) } });
      expect(refusal !== 'unverified' && refusal?.said).toContain('the most one person may');
      expect(metrics.instruction).toHaveBeenCalledExactlyOnceWith('command', 'refused', 'rate');
    });

    it('makes an instruction whose author Slack cannot confirm wait for verification, counting nothing yet', async () => {
      setUp();
      w.slack.userInfo.mockRejectedValue(new Error('ratelimited'));
      const { run } = await w.insertJob();
      expect(await checks.refusal(run.id, 'Go', who(), 'shortcut')).toBe('unverified');
      expect(metrics.instruction).not.toHaveBeenCalled();
      expect(await uses()).toBe(0);
    });
  });

  describe('waitOrGiveUp', () => {
    const waiting = async () => {
      const { job } = await w.insertJob();
      return {
        kind: 'job' as const,
        id: job.id,
        jobId: job.id,
        since: w.clock.at,
        to: { channelId: CHANNEL, userId: REQUESTER, threadTs: null, responseUrl: null },
        recheck: vi.fn(async () => {}),
      };
    };

    it('keeps an instruction waiting for verification, telling its author once', async () => {
      setUp();
      const h = await waiting();
      expect(await checks.waitOrGiveUp(h, 'command')).toBeUndefined();
      expect(w.outboxKeys()).toEqual([`held:job:${h.id}`]);
      expect(metrics.instruction).not.toHaveBeenCalled();
    });

    it('gives up on one waiting too long: the refusal to give, counted as unverified', async () => {
      setUp();
      const h = await waiting();
      w.advance(VERIFICATION_LIMIT_MS + 1);
      expect(await checks.waitOrGiveUp(h, 'workflow')).toEqual({
        said: text.verificationTimedOut(),
        why: { reason: 'held_too_long' },
      });
      expect(metrics.instruction).toHaveBeenCalledExactlyOnceWith('workflow', 'refused', 'unverified');
    });
  });

  describe('accessWhereAsked', () => {
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
      expect(await accessWhereAsked(access, job, { userId: 'U0OUTSIDER', teamId: 'T0OTHER' }, 1_500)).toEqual(
        {
          allowed: false,
          reason: 'team',
        },
      );
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
});

describe('instructions waiting for verification', () => {
  const FIRST_RETRY_MS = 1_000;
  let w: JobWorld;
  let verification: VerificationWaits;
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    w = createJobWorld();
    verification = createVerificationWaits({ ...w.ctx, firstRetryMs: FIRST_RETRY_MS });
  });
  afterEach(async () => {
    verification.stop();
    vi.useRealTimers();
    await w.store.close();
  });

  async function waiting(fields: Partial<VerificationWait> = {}): Promise<VerificationWait> {
    const { job } = await w.insertJob();
    return {
      kind: 'job',
      id: job.id,
      jobId: job.id,
      since: w.clock.at,
      to: { channelId: CHANNEL, userId: REQUESTER, threadTs: null, responseUrl: null },
      recheck: vi.fn(async () => {}),
      ...fields,
    };
  }

  describe('wait', () => {
    it('tells the author once, however often the instruction waits', async () => {
      const h = await waiting();
      expect(await verification.wait(h)).toBe(true);
      expect(await verification.wait(h)).toBe(true);
      const [note, ...more] = w.outbox();
      expect(more).toEqual([]);
      expect(note?.key).toBe(`held:job:${h.id}`);
      expect(note?.payload).toMatchObject({ type: 'ephemeral', channel: CHANNEL, user: REQUESTER });
      expect(JSON.stringify(note?.payload)).toContain('Slack could not confirm who you are');
      expect(w.deps.loops.outbox.kick).toHaveBeenCalled();
    });

    it('checks again after the first wait, then waits twice as long each time, up to the cap', async () => {
      const h = await waiting();
      const waits: number[] = [];
      for (let attempt = 0; attempt < 8; attempt++) {
        await verification.wait(h);
        const before = vi.mocked(h.recheck).mock.calls.length;
        let waited = 0;
        for (; vi.mocked(h.recheck).mock.calls.length === before && waited < 120_000; waited += 100)
          await vi.advanceTimersByTimeAsync(100);
        waits.push(waited);
      }
      expect(waits).toEqual([
        1_000,
        2_000,
        4_000,
        8_000,
        16_000,
        32_000,
        VERIFICATION_MAX_RETRY_MS,
        VERIFICATION_MAX_RETRY_MS,
      ]);
    });

    it('gives up on an instruction waiting longer than the limit', async () => {
      const h = await waiting();
      w.advance(VERIFICATION_LIMIT_MS + 1);
      expect(await verification.wait(h)).toBe(false);
      expect(w.outbox()).toEqual([]);
      await vi.advanceTimersByTimeAsync(VERIFICATION_MAX_RETRY_MS);
      expect(h.recheck).not.toHaveBeenCalled();
    });

    it('gives up on a workflow step’s job past its own, shorter limit, before Slack ends the step', async () => {
      const h = await waiting({ limitMs: STEP_VERIFICATION_LIMIT_MS });
      expect(STEP_VERIFICATION_LIMIT_MS).toBeLessThan(15 * 60_000);
      w.advance(STEP_VERIFICATION_LIMIT_MS);
      expect(await verification.wait(h)).toBe(true);
      w.advance(1);
      expect(await verification.wait(h)).toBe(false);
    });

    it('with no background slot free at the check, waits as long again', async () => {
      const h = await waiting();
      vi.mocked(w.deps.runTask).mockReturnValueOnce(false);
      await verification.wait(h);
      await vi.advanceTimersByTimeAsync(FIRST_RETRY_MS);
      expect(h.recheck).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(FIRST_RETRY_MS);
      expect(h.recheck).toHaveBeenCalledOnce();
    });

    it('checks nothing again once stopped: what waits stays recorded', async () => {
      const h = await waiting();
      await verification.wait(h);
      verification.stop();
      await vi.advanceTimersByTimeAsync(VERIFICATION_MAX_RETRY_MS);
      expect(h.recheck).not.toHaveBeenCalled();
      expect(await verification.wait(h)).toBe(true);
      await vi.advanceTimersByTimeAsync(VERIFICATION_MAX_RETRY_MS);
      expect(h.recheck).not.toHaveBeenCalled();
    });
  });
});
