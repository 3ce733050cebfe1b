import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AgentNotFoundError, AgentOutcomeUnknownError } from '../../src/agent/errors.js';
import { text } from '../../src/blocks/messages.js';
import { agentErrorText } from '../../src/blocks/refusal-texts.js';
import { BATCH_RETRY_MS, createFollowUps, type FollowUps } from '../../src/jobs/follow-ups.js';
import type { JobRecord } from '../../src/store/types.js';
import { agentJob } from '../helpers/fake-network.js';
import { CHANNEL, createJobWorld, type JobWorld, T0 } from '../helpers/job-world.js';

const BATCH_MS = 3_000;
let w: JobWorld;
let followUps: FollowUps;
beforeEach(() => {
  // Only the batch timers are faked: the store and the fakes answer as they would.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  w = createJobWorld({ FOLLOW_UP_BATCH_MS: String(BATCH_MS) });
  followUps = createFollowUps(w.ctx);
});
afterEach(async () => {
  followUps.stop();
  vi.useRealTimers();
  await w.store.close();
});

/** A checked reply waiting to be sent, recorded now. */
const ready = (job: JobRecord, authorId: string, prompt: string, messageTs: string) =>
  w.insertFollowUp(job.id, { authorId, prompt, messageTs }, 'ready');

/** Lets the batch window pass, on the flows' clock and on their timers. */
async function windowPasses(ms = BATCH_MS) {
  w.advance(ms);
  await vi.advanceTimersByTimeAsync(ms);
  await w.background();
}

describe('dispatchReady', () => {
  it('waits for the batch window, then sends the replies in it as one follow-up', async () => {
    const { job } = await w.activeJob();
    const first = await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    await followUps.dispatchReady(job.id);
    w.advance(1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    const second = await ready(job, 'U0TWO', 'And the CLI', '1700000501.000501');
    await followUps.dispatchReady(job.id);
    expect(w.agent.sendMessage).not.toHaveBeenCalled();

    await windowPasses(BATCH_MS - 1_000);
    expect(w.agent.sendMessage).toHaveBeenCalledOnce();
    expect(w.agent.sendMessage).toHaveBeenCalledWith('job_test_1', 'Also the SDK\n\nAnd the CLI');
    const runs = await w.runs(job.id);
    expect(runs.filter((r) => r.kind === 'follow_up').map((r) => r.state)).toEqual(['sent', 'sent']);
    // One run for the agent's quota and for the card: the batch.
    expect((await w.job(job.id)).runCount).toBe(2);
    expect(w.outboxKeys().sort()).toEqual([`received:${first.id}`, `received:${second.id}`].sort());
  });

  it('sends nothing once stopped: the replies stay ready for whoever takes over', async () => {
    const { job } = await w.activeJob();
    const run = await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    await followUps.dispatchReady(job.id);
    followUps.stop();
    await windowPasses();
    expect(w.deps.runTask).not.toHaveBeenCalled();
    expect((await w.store.getRun(run.id))?.state).toBe('ready');
  });

  it('with no background slot free, keeps the replies and tries again later', async () => {
    const { job } = await w.activeJob();
    await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    vi.mocked(w.deps.runTask).mockReturnValueOnce(false);
    await followUps.dispatchReady(job.id);
    await windowPasses();
    expect(w.agent.sendMessage).not.toHaveBeenCalled();
    await windowPasses(BATCH_RETRY_MS);
    expect(w.agent.sendMessage).toHaveBeenCalledOnce();
  });

  it('a job the agent forgot: the job is gone and the authors are told in the thread', async () => {
    w.agent.sendMessage.mockRejectedValueOnce(new AgentNotFoundError('no such job'));
    const { job } = await w.activeJob();
    const run = await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    w.advance(BATCH_MS);
    await followUps.dispatchReady(job.id);

    expect(await w.job(job.id)).toMatchObject({ phase: 'gone', nextPollAt: null });
    expect(await w.store.getRun(run.id)).toMatchObject({ state: 'failed' });
    const post = w.outbox().find((r) => r.key === `followup-error:${run.id}:${job.id}`);
    expect(post?.payload).toMatchObject({
      type: 'post',
      channel: CHANNEL,
      about: { kind: 'notice', run: 2 },
    });
    expect(JSON.stringify(post?.payload)).toContain('<@U0ONE>');
  });

  it('a follow-up whose answer was lost is unknown, never sent again', async () => {
    w.agent.sendMessage.mockRejectedValueOnce(new AgentOutcomeUnknownError('timed out'));
    const { job } = await w.activeJob();
    const run = await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    w.advance(BATCH_MS);
    await followUps.dispatchReady(job.id);
    await followUps.dispatchReady(job.id);
    expect(w.agent.sendMessage).toHaveBeenCalledOnce();
    expect((await w.store.getRun(run.id))?.state).toBe('unknown');
    expect((await w.job(job.id)).phase).toBe('active');
  });

  it('explains each waiting reply of a job that ended, and sends none', async () => {
    const { job } = await w.activeJob();
    const one = await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    const two = await ready(job, 'U0TWO', 'And the CLI', '1700000501.000501');
    await w.store.apply({ jobId: job.id, job: { phase: 'start_unknown' } }, T0);
    await followUps.dispatchReady(job.id);
    expect(w.agent.sendMessage).not.toHaveBeenCalled();
    expect(w.outboxKeys()).toEqual([`dropped:${one.id}`, `dropped:${two.id}`]);
    expect(w.outbox().map((r) => (r.payload as { user?: string }).user)).toEqual(['U0ONE', 'U0TWO']);
  });
});

describe('follow-ups, exactly', () => {
  it('marks each waiting reply of an ended job failed with the reason, says which, and counts it refused', async () => {
    const instruction = vi.fn();
    followUps.stop();
    followUps = createFollowUps({ ...w.ctx, metrics: { instruction } });
    const { job } = await w.activeJob();
    const run = await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    await w.store.apply({ jobId: job.id, job: { phase: 'start_unknown' } }, T0);
    await followUps.dispatchReady(job.id);
    expect(await w.store.getRun(run.id)).toMatchObject({ state: 'failed', error: 'job is start_unknown' });
    expect(instruction.mock.calls).toEqual([['reply', 'refused', 'no_job']]);
    expect(JSON.stringify(w.outbox()[0]?.payload)).toContain(
      JSON.stringify(text.followUpNoJob('start_unknown')).slice(1, -1),
    );
  });

  it('tells the author of a reply to a job the agent forgot that it is gone', async () => {
    const { job } = await w.activeJob();
    await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    await w.store.apply({ jobId: job.id, job: { phase: 'gone' } }, T0);
    await followUps.dispatchReady(job.id);
    const payload = JSON.stringify(w.outbox()[0]?.payload);
    expect(payload).toContain(JSON.stringify(text.followUpJobGone()).slice(1, -1));
    expect(payload).not.toContain(JSON.stringify(text.followUpNoJob('gone')).slice(1, -1));
  });

  it('sends a batch once when two tasks reach it together', async () => {
    const { job } = await w.activeJob();
    await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    w.advance(BATCH_MS);
    await Promise.all([followUps.dispatchReady(job.id), followUps.dispatchReady(job.id)]);
    expect(w.agent.sendMessage).toHaveBeenCalledExactlyOnceWith('job_test_1', 'Also the SDK');
  });

  it('logs a failed follow-up with its job and operation', async () => {
    w.agent.sendMessage.mockRejectedValueOnce(new AgentNotFoundError('no such job'));
    const { job } = await w.activeJob();
    await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    w.advance(BATCH_MS);
    await followUps.dispatchReady(job.id);
    const line = w.logs.find((l) => l.includes('"op":"follow-up"'));
    expect(line).toContain(`"jobId":${job.id}`);
  });

  it('does not wait again for a batch a task took', async () => {
    const { job } = await w.activeJob();
    await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    await followUps.dispatchReady(job.id);
    await windowPasses();
    expect(w.agent.sendMessage).toHaveBeenCalledOnce();
    await windowPasses(BATCH_RETRY_MS * 3);
    expect(w.deps.runTask).toHaveBeenCalledOnce();
  });

  it('tries again shortly when the store cannot be read once the window has passed', async () => {
    let failing = false;
    const store = new Proxy(w.store, {
      get: (target, key) =>
        key === 'getJob'
          ? async (id: number) => {
              if (failing) {
                failing = false;
                throw new Error('database is locked');
              }
              return target.getJob(id);
            }
          : Reflect.get(target, key),
    });
    followUps.stop();
    followUps = createFollowUps({ ...w.ctx, store });
    const { job } = await w.activeJob();
    await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    await followUps.dispatchReady(job.id);
    failing = true;
    await windowPasses();
    expect(w.agent.sendMessage).not.toHaveBeenCalled();
    expect(w.logs.filter((l) => l.includes('could not send waiting follow-ups; will retry'))).toEqual([
      expect.stringContaining(`"jobId":${job.id}`),
    ]);
    await windowPasses(BATCH_RETRY_MS);
    expect(w.agent.sendMessage).toHaveBeenCalledOnce();
  });

  it('starts no new wait once stopped', async () => {
    const { job } = await w.activeJob();
    followUps.stop();
    await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    await followUps.dispatchReady(job.id);
    await windowPasses();
    expect(w.deps.runTask).not.toHaveBeenCalled();
  });
});

describe('what a batch records and reports', () => {
  const updates = () => w.outbox().filter((r) => r.payload.type === 'update_root');

  it('counts a sent batch, logs its replies, updates the card, and runs in a task of its own', async () => {
    const instruction = vi.fn();
    followUps.stop();
    followUps = createFollowUps({ ...w.ctx, metrics: { instruction } });
    const { job } = await w.activeJob();
    await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    await ready(job, 'U0TWO', 'And the CLI', '1700000501.000501');
    await followUps.dispatchReady(job.id);
    await windowPasses();
    expect(w.deps.runTask).toHaveBeenCalledWith('send follow-ups', expect.any(Function));
    expect(instruction.mock.calls).toEqual([['reply', 'sent', undefined, 2]]);
    expect(w.logs.find((l) => l.includes('follow-up sent'))).toContain('"runs":[2,3]');
    expect(updates()).toHaveLength(1);
  });

  it('tells every author of a refused batch, counts it, and shows a forgotten job on its card', async () => {
    const instruction = vi.fn();
    followUps.stop();
    followUps = createFollowUps({ ...w.ctx, metrics: { instruction } });
    const error = new AgentNotFoundError('no such job');
    w.agent.sendMessage.mockRejectedValueOnce(error);
    const { job } = await w.activeJob();
    await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    await ready(job, 'U0TWO', 'And the CLI', '1700000501.000501');
    w.advance(BATCH_MS);
    await followUps.dispatchReady(job.id);
    expect(instruction.mock.calls).toEqual([['reply', 'failed', 'agent', 2]]);
    const notice = w.outbox().find((r) => r.key?.startsWith('followup-error:'));
    expect((notice?.payload as { text?: string } | undefined)?.text).toBe(
      `<@U0ONE> <@U0TWO> ${agentErrorText(error, 'follow-up')}`,
    );
    expect(updates()).toHaveLength(1);
  });

  it('a batch that fails after a stop covered the run it would have started gives the stop back to the run the agent has', async () => {
    const { job } = await w.activeJob();
    await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    // The stop is pressed while the batch is on its way: it covers the next run too.
    w.agent.sendMessage.mockImplementationOnce(async () => {
      await w.store.apply({ jobId: job.id, job: { stoppedRun: job.runCount + 1 } }, w.clock.at);
      throw new AgentOutcomeUnknownError('timed out');
    });
    w.advance(BATCH_MS);
    await followUps.dispatchReady(job.id);
    expect(await w.job(job.id)).toMatchObject({ runCount: job.runCount, stoppedRun: job.runCount });
  });

  it('a batch that fails leaves a stop of the run the agent has as it was', async () => {
    const { job } = await w.activeJob();
    await w.store.apply({ jobId: job.id, job: { stoppedRun: job.runCount } }, w.clock.at);
    await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    w.agent.sendMessage.mockRejectedValueOnce(new AgentOutcomeUnknownError('timed out'));
    w.advance(BATCH_MS);
    await followUps.dispatchReady(job.id);
    expect((await w.job(job.id)).stoppedRun).toBe(job.runCount);
  });

  it('a batch that fails sets no stop where none was pressed, and leaves an earlier run’s stop as it was', async () => {
    const { job } = await w.activeJob();
    await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    w.agent.sendMessage.mockRejectedValueOnce(new AgentOutcomeUnknownError('timed out'));
    w.advance(BATCH_MS);
    await followUps.dispatchReady(job.id);
    expect((await w.job(job.id)).stoppedRun).toBeNull();
    // The run the agent had was stopped, and the agent has had a later one since.
    await w.store.apply(
      { jobId: job.id, job: { stoppedRun: job.runCount }, incrementRunCount: true },
      w.clock.at,
    );
    await ready(job, 'U0ONE', 'And the CLI', '1700000600.000600');
    w.agent.sendMessage.mockRejectedValueOnce(new AgentOutcomeUnknownError('timed out'));
    w.advance(BATCH_MS);
    await followUps.dispatchReady(job.id);
    expect(await w.job(job.id)).toMatchObject({ runCount: job.runCount + 1, stoppedRun: job.runCount });
  });

  /** Follow-ups whose claim on a batch is answered a whole claim time later, taken over by then if `taken`. */
  function lateClaim(runId: number, taken: boolean) {
    const clock = { at: 0 };
    const store = {
      ...w.store,
      async claimReadyRuns(...args: Parameters<typeof w.store.claimReadyRuns>) {
        const runs = await w.store.claimReadyRuns(...args);
        clock.at += w.ctx.leases.agentWrite.leaseMs;
        if (taken) w.store.db.prepare("UPDATE runs SET owner = 'instance-other' WHERE id = ?").run(runId);
        return runs;
      },
    };
    followUps.stop();
    followUps = createFollowUps({ ...w.ctx, store, monotonic: () => clock.at });
  }

  it('renews a claim that no longer covers the call, then sends the batch', async () => {
    const { job } = await w.activeJob();
    const run = await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    lateClaim(run.id, false);
    w.advance(BATCH_MS);
    await followUps.dispatchReady(job.id);
    expect(w.agent.sendMessage).toHaveBeenCalledOnce();
    expect((await w.store.getRun(run.id))?.state).toBe('sent');
  });

  it('sends nothing once another instance has taken the batch over, and says so', async () => {
    const { job } = await w.activeJob();
    const run = await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    lateClaim(run.id, true);
    w.advance(BATCH_MS);
    await followUps.dispatchReady(job.id);
    expect(w.agent.sendMessage).not.toHaveBeenCalled();
    expect(w.logs.filter((l) => l.includes('another instance took this follow-up over'))).toEqual([
      expect.stringContaining(`"jobId":${job.id},"runIds":[${run.id}]`),
    ]);
  });

  it('records nothing of the agent’s answer once another instance has taken the batch over during the call', async () => {
    const { job } = await w.activeJob();
    const run = await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    w.agent.sendMessage.mockImplementationOnce(async (id: string) => {
      w.store.db.prepare("UPDATE runs SET owner = 'instance-other' WHERE id = ?").run(run.id);
      return agentJob({ id });
    });
    w.advance(BATCH_MS);
    await followUps.dispatchReady(job.id);
    expect(w.agent.sendMessage).toHaveBeenCalledOnce();
    expect((await w.store.getRun(run.id))?.state).not.toBe('sent');
    expect((await w.job(job.id)).runCount).toBe(job.runCount);
  });

  it('keeps replies waiting while the job is still being created', async () => {
    const { job } = await w.insertJob();
    await w.store.apply({ jobId: job.id, job: { phase: 'creating' } }, T0);
    const run = await ready(job, 'U0ONE', 'Also the SDK', '1700000500.000500');
    w.advance(BATCH_MS);
    await followUps.dispatchReady(job.id);
    await windowPasses();
    expect(w.agent.sendMessage).not.toHaveBeenCalled();
    expect((await w.store.getRun(run.id))?.state).toBe('ready');
    expect(w.outbox()).toEqual([]);
  });
});
