import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createVerificationWaits,
  STEP_VERIFICATION_LIMIT_MS,
  VERIFICATION_LIMIT_MS,
  VERIFICATION_MAX_RETRY_MS,
  type VerificationWait,
  type VerificationWaits,
} from '../../src/jobs/verification-waits.js';
import { CHANNEL, createJobWorld, type JobWorld, REQUESTER } from '../helpers/job-world.js';

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
