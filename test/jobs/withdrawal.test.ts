import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createWithdrawal } from '../../src/jobs/withdrawal.js';
import type { RunState } from '../../src/store/types.js';
import { createJobWorld, INSTANCE, type JobWorld } from '../helpers/job-world.js';

const REPLY_TS = '1700000300.000300';
const AUTHOR = 'U0HELPER';

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

/** A reply to an active job, recorded and left in `state`. */
async function reply(state: RunState = 'pending', messageTs = REPLY_TS) {
  const { job } = await w.activeJob();
  const { run } = await w.store.insertFollowUp(
    job.id,
    { kind: 'follow_up', prompt: 'Also the SDK', authorId: AUTHOR, messageTs, owner: INSTANCE },
    w.clock.at,
  );
  if (state !== 'pending')
    await w.store.apply({ jobId: job.id, run: { id: run.id, patch: { state } } }, w.clock.at);
  return { job, run };
}

describe('withdrawWaiting', () => {
  it('takes back every instruction of the job still waiting, and only those', async () => {
    const { job, run: ready } = await reply('ready');
    const { run: pending } = await w.store.insertFollowUp(
      job.id,
      {
        kind: 'follow_up',
        prompt: 'And the CLI',
        authorId: AUTHOR,
        messageTs: '1700000310.000310',
        owner: INSTANCE,
      },
      w.clock.at,
    );
    const { run: sent } = await w.store.insertFollowUp(
      job.id,
      {
        kind: 'follow_up',
        prompt: 'Sent already',
        authorId: AUTHOR,
        messageTs: '1700000320.000320',
        owner: INSTANCE,
      },
      w.clock.at,
    );
    await w.store.apply({ jobId: job.id, run: { id: sent.id, patch: { state: 'sent' } } }, w.clock.at);

    const taken = await withdrawal.withdrawWaiting(await w.job(job.id));
    expect(taken.map((r) => r.id).sort()).toEqual([ready.id, pending.id].sort());
    expect((await w.store.getRun(sent.id))?.state).toBe('sent');
    // The active job's own first run went out long ago: it stays.
    expect((await w.runs(job.id)).filter((r) => r.state === 'failed')).toHaveLength(2);
    expect(await withdrawal.withdrawWaiting(await w.job(job.id))).toEqual([]);
  });
});
