import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { carryOnMessage, runRecorded } from '../../src/jobs/background.js';
import { TEAM } from '../helpers/fake-network.js';
import { CHANNEL, INSTANCE } from '../helpers/job-world.js';
import { createListenerWorld, type ListenerWorld } from '../helpers/listener-deps.js';

let w: ListenerWorld;
beforeEach(() => {
  w = createListenerWorld();
});
afterEach(() => w.stop());

const ownerOf = (table: 'jobs' | 'runs', id: number) =>
  (w.store.db.prepare(`SELECT owner FROM ${table} WHERE id = ?`).get(id) as { owner: string | null }).owner;

/** Every background slot is taken: the tracker turns the next piece of work away. */
const noRoom = () => vi.mocked(w.deps.tasks.run).mockReturnValueOnce(false);

/** A follow-up recorded in the thread of a job the agent is working on. */
async function recordedReply() {
  const { job } = await w.activeJob();
  await w.jobs.acceptReply({
    teamId: TEAM,
    channelId: CHANNEL,
    threadTs: job.threadTs ?? '',
    messageTs: '1700000500.000500',
    userId: 'U0HELPER',
    text: 'Also cover the SDK',
  });
  const runs = await w.runs(job.id);
  return runs[runs.length - 1]?.id as number;
}

describe('runRecorded', () => {
  it('hands the work to a background slot, and leaves the store as it is', async () => {
    const { job } = await w.insertJob();
    const work = vi.fn(async () => {});
    runRecorded(w.deps, 'start job', work, { jobId: job.id });
    await w.idle();
    expect(work).toHaveBeenCalledOnce();
    expect(ownerOf('jobs', job.id)).toBe(INSTANCE);
  });

  it('with no slot free: does not run or queue it, and leaves the job to the take-over round', async () => {
    const { job } = await w.insertJob();
    const work = vi.fn(async () => {});
    noRoom();
    runRecorded(w.deps, 'start job', work, { jobId: job.id });
    await vi.waitFor(() => expect(ownerOf('jobs', job.id)).toBeNull());
    expect(work).not.toHaveBeenCalled();
    expect(w.logged('warn', 'no room for background work')).toHaveLength(1);
  });

  it('with no slot free: leaves a follow-up (a run, not a job) to the take-over round', async () => {
    const runId = await recordedReply();
    expect(ownerOf('runs', runId)).toBe(INSTANCE);
    noRoom();
    runRecorded(w.deps, 'forward reply', async () => {}, { runId });
    await vi.waitFor(() => expect(ownerOf('runs', runId)).toBeNull());
  });
});

describe('carryOnMessage', () => {
  it('a new job is started', async () => {
    const { job } = await w.insertJob();
    carryOnMessage(w.deps, { job: job.id }, TEAM);
    await w.idle();
    expect(w.deps.tasks.run).toHaveBeenCalledWith('start job', expect.any(Function));
    expect(w.agent.createJob).toHaveBeenCalledOnce();
  });

  it('a follow-up is forwarded to the job’s agent', async () => {
    const runId = await recordedReply();
    carryOnMessage(w.deps, { reply: runId }, TEAM);
    await w.idle();
    expect(w.deps.tasks.run).toHaveBeenCalledWith('forward reply', expect.any(Function));
    expect(w.agent.sendMessage).toHaveBeenCalledWith('job_test_1', 'Also cover the SDK');
  });

  it('a message that became nothing (a repeat, an aside) starts nothing', async () => {
    carryOnMessage(w.deps, undefined, TEAM);
    await w.idle();
    expect(w.deps.tasks.run).not.toHaveBeenCalled();
  });
});
