import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createWithdrawal } from '../../src/jobs/withdrawal.js';
import { createJobWorld, type JobWorld } from '../helpers/job-world.js';

let w: JobWorld;
const dispatchReady = vi.fn(async (_jobId: number) => {});
let withdrawal: ReturnType<typeof createWithdrawal>;
beforeEach(() => {
  w = createJobWorld();
  dispatchReady.mockClear();
  withdrawal = createWithdrawal(w.ctx, dispatchReady);
});
afterEach(async () => {
  await w.store.close();
});

describe('withdrawWaiting', () => {
  it('takes back every instruction of the job still waiting, and only those', async () => {
    const { job, run: ready } = await w.activeJobWithReply('ready');
    const pending = await w.insertFollowUp(job.id, { prompt: 'And the CLI', messageTs: '1700000310.000310' });
    const sent = await w.insertFollowUp(
      job.id,
      { prompt: 'Sent already', messageTs: '1700000320.000320' },
      'sent',
    );

    const taken = await withdrawal.withdrawWaiting(await w.job(job.id));
    expect(taken.map((r) => r.id).sort()).toEqual([ready.id, pending.id].sort());
    expect((await w.store.getRun(sent.id))?.state).toBe('sent');
    // The active job's own first run went out long ago: it stays.
    expect((await w.runs(job.id)).filter((r) => r.state === 'failed')).toHaveLength(2);
    expect(await withdrawal.withdrawWaiting(await w.job(job.id))).toEqual([]);
  });
});
