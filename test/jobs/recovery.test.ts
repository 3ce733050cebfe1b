import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { stepRefusalText } from '../../src/blocks/refusal-texts.js';
import { triggerKeys } from '../../src/domain/keys.js';
import type { JobPhase } from '../../src/domain/phases.js';
import type { JobService } from '../../src/jobs/job-service.js';
import { recoverOrphans } from '../../src/jobs/recovery.js';
import { SlackCallError } from '../../src/slack/caller.js';
import type { RunRecord, RunState } from '../../src/store/types.js';
import { createTaskTracker, type TaskTracker } from '../../src/util/tasks.js';
import { CHANNEL, createJobWorld, type JobWorld, REQUESTER, T0 } from '../helpers/job-world.js';

let w: JobWorld;
let jobs: JobService;
beforeEach(() => {
  w = createJobWorld();
  jobs = w.service();
});
afterEach(async () => {
  jobs.stop();
  await w.store.close();
});

/** A job a stopped process left in `phase`, as {@link Store.takeOverOrphans} hands it over. */
async function leftIn(
  phase: JobPhase,
  fields: { threadTs?: string } = {},
  recorded: Parameters<JobWorld['insertJob']>[0] = {},
) {
  const { job, run } = await w.insertJob(recorded);
  await w.store.apply(
    {
      jobId: job.id,
      job: { phase, ...fields },
      ...(phase === 'creating' ? { run: { id: run.id, patch: { state: 'sending' as const } } } : {}),
    },
    T0,
  );
  return w.job(job.id);
}

/** A follow-up to an active job, left in `state`. */
const followUpLeft = (state: RunState) => w.activeJobWithReply(state);

describe('recover: jobs', () => {
  it('accepted: starts the job as if the command had just arrived', async () => {
    const job = await leftIn('accepted');
    await jobs.recover({ jobs: [job], runs: [] });
    expect(w.agent.createJob).toHaveBeenCalledOnce();
    expect((await w.job(job.id)).phase).toBe('active');
  });

  it('posting, and Slack holds the card: carries on from that card without posting again', async () => {
    const job = await leftIn('posting');
    w.slack.findInChannel.mockResolvedValueOnce('1700000600.000600');
    await jobs.recover({ jobs: [job], runs: [] });
    expect(w.slack.postMessage).not.toHaveBeenCalled();
    expect(w.agent.createJob).toHaveBeenCalledOnce();
    expect(await w.job(job.id)).toMatchObject({ phase: 'active', cardTs: '1700000600.000600' });
  });

  it('posting, and Slack surely has no card: starts over', async () => {
    const job = await leftIn('posting');
    await jobs.recover({ jobs: [job], runs: [] });
    expect(w.slack.postMessage).toHaveBeenCalledOnce();
    expect(w.agent.createJob).toHaveBeenCalledOnce();
    expect((await w.job(job.id)).phase).toBe('active');
  });

  it('posting, and Slack cannot say: tells the requester nothing was started', async () => {
    const job = await leftIn('posting');
    w.slack.findInChannel.mockRejectedValueOnce(new SlackCallError('conversations.history', 'fatal_error'));
    await jobs.recover({ jobs: [job], runs: [] });
    expect(w.slack.postMessage).not.toHaveBeenCalled();
    expect(w.agent.createJob).not.toHaveBeenCalled();
    expect(await w.job(job.id)).toMatchObject({
      phase: 'not_started',
      lastError: 'restarted while posting the root message',
    });
    expect((await w.runs(job.id))[0]).toMatchObject({ state: 'failed', error: 'restarted' });
    const [note, ...more] = w.outbox();
    expect(more).toEqual([]);
    expect(note?.key).toBe(`restart-refused:${job.id}`);
    expect(note?.payload).toMatchObject({ type: 'ephemeral', channel: CHANNEL, user: REQUESTER });
  });

  it('creating: says in the thread the start is unknown, and never creates it again', async () => {
    const job = await leftIn('creating', { threadTs: '1700000300.000300' });
    await jobs.recover({ jobs: [job], runs: [] });
    expect(w.agent.createJob).not.toHaveBeenCalled();
    expect(await w.job(job.id)).toMatchObject({
      phase: 'start_unknown',
      lastError: 'restarted while creating the job',
    });
    expect((await w.runs(job.id))[0]).toMatchObject({ state: 'unknown', error: 'restarted' });
    const post = w.outbox().find((r) => r.key === `start-unknown:${job.id}`);
    expect(post?.payload).toMatchObject({ type: 'post', threadTs: '1700000300.000300' });
    expect(JSON.stringify(post?.payload)).toContain('cannot tell whether the docs agent received it');
  });

  it('creating, for a workflow step: fails the step once, in words for the workflow’s builder', async () => {
    const job = await leftIn(
      'creating',
      { threadTs: '1700000300.000300' },
      { origin: 'workflow', triggerKey: triggerKeys.step('Fx0LEFT') },
    );
    await jobs.recover({ jobs: [job], runs: [] });
    const answers = w.outbox().filter((r) => r.payload.type === 'complete_step');
    expect(answers.map((r) => r.payload)).toEqual([
      {
        type: 'complete_step',
        executionId: 'Fx0LEFT',
        result: {
          error: stepRefusalText(
            { reason: 'restarted_before_create' },
            { userId: REQUESTER, channelId: CHANNEL },
          ),
        },
      },
    ]);
    expect(JSON.stringify(answers[0]?.payload)).not.toMatch(/:[a-z_]+:|run \/docs-agent/);
  });

  it('leaves alone a job that moved on since it was handed over', async () => {
    const job = await leftIn('creating', { threadTs: '1700000300.000300' });
    await w.store.apply({ jobId: job.id, job: { phase: 'active' } }, T0);
    await jobs.recover({ jobs: [job], runs: [] });
    expect((await w.job(job.id)).phase).toBe('active');
    expect(w.outbox()).toEqual([]);
  });
});

describe('recover: follow-ups', () => {
  it('a reply only recorded is checked and sent now', async () => {
    const { run } = await followUpLeft('pending');
    await jobs.recover({ jobs: [], runs: [run] });
    expect(w.agent.sendMessage).toHaveBeenCalledWith('job_test_1', 'Also the SDK');
    expect((await w.store.getRun(run.id))?.state).toBe('sent');
  });

  it('a reply being sent: says its arrival is unknown, and never sends it again', async () => {
    const { job, run } = await followUpLeft('sending');
    await jobs.recover({ jobs: [], runs: [run] });
    expect(w.agent.sendMessage).not.toHaveBeenCalled();
    expect(await w.store.getRun(run.id)).toMatchObject({
      state: 'unknown',
      error: 'restarted while sending',
    });
    const [post, ...more] = w.outbox();
    expect(more).toEqual([]);
    expect(post?.key).toBe(`followup-unknown:${run.id}:${job.id}`);
    expect(JSON.stringify(post?.payload)).toContain('<@U0HELPER>');
  });

  it('wakes the outbox at the end of a round, even one that queued nothing', async () => {
    await jobs.recover({ jobs: [], runs: [] });
    expect(w.deps.loops.outbox.kick).toHaveBeenCalledOnce();
  });
});

describe('recoverOrphans', () => {
  let w: JobWorld;
  let jobs: JobService | undefined;
  beforeEach(() => {
    w = createJobWorld();
  });
  afterEach(async () => {
    jobs?.stop();
    jobs = undefined;
    await w.store.close();
  });

  /** The task tracker, with every piece of work it was given counted. */
  function tracker(options: { concurrency: number; maxQueued: number }) {
    const real: TaskTracker = createTaskTracker(w.ctx.logger, options);
    return { run: vi.fn((name: string, work: () => Promise<void>) => real.run(name, work)), real };
  }

  /** A follow-up of an active job, recorded by this instance and never sent. */
  const waitingFollowUp = async (): Promise<RunRecord> => (await w.activeJobWithReply()).run;

  it('carries on each job and follow-up as its own task, and hands nothing back when all fit', async () => {
    const tasks = tracker({ concurrency: 4, maxQueued: 10 });
    // Membership is built before the job service: the service is asked for when work arrives.
    const carryOn = recoverOrphans(tasks, () => jobs as JobService);
    jobs = w.service();
    const { job: first } = await w.insertJob();
    const { job: second } = await w.insertJob({}, 'Explain webhooks');
    const run = await waitingFollowUp();

    carryOn({ jobs: [first, second], runs: [run] });
    expect(tasks.run).toHaveBeenCalledTimes(3);
    expect(await tasks.real.drain(5_000)).toBe(true);

    // Both jobs were started, as if their commands had just arrived.
    expect(w.agent.createJob).toHaveBeenCalledTimes(2);
    expect((await w.job(first.id)).phase).not.toBe('accepted');
    expect((await w.job(second.id)).phase).not.toBe('accepted');
    // The follow-up was processed: it no longer waits for its checks.
    expect((await w.store.getRun(run.id))?.state).not.toBe('pending');
  });

  it('hands back to the store the jobs and follow-ups for which no slot is free', async () => {
    const tasks = tracker({ concurrency: 1, maxQueued: 0 });
    jobs = w.service();
    const { job: taken } = await w.insertJob();
    const { job: left } = await w.insertJob({}, 'Explain webhooks');
    const run = await waitingFollowUp();

    recoverOrphans(tasks, () => jobs as JobService)({ jobs: [taken, left], runs: [run] });
    await tasks.real.drain(5_000);
    // handBack is not awaited by recoverOrphans: let its store write land.
    await vi.waitFor(async () => expect((await w.job(left.id)).owner).toBeNull());

    expect(w.agent.createJob).toHaveBeenCalledOnce();
    expect((await w.job(taken.id)).phase).not.toBe('accepted');
    // Left for the next take-over round: unowned, untouched.
    expect(await w.job(left.id)).toMatchObject({ phase: 'accepted', owner: null });
    expect(await w.store.getRun(run.id)).toMatchObject({ state: 'pending', owner: null });
    expect(w.logs.some((l) => l.includes('left to the store for the next take-over round'))).toBe(true);
  });

  it('with no orphans, starts nothing and leaves nothing to the store', async () => {
    const tasks = tracker({ concurrency: 1, maxQueued: 0 });
    jobs = w.service();
    const handBack = vi.spyOn(jobs, 'handBack');
    recoverOrphans(tasks, () => jobs as JobService)({ jobs: [], runs: [] });
    expect(tasks.run).not.toHaveBeenCalled();
    expect(handBack).toHaveBeenCalledWith({ jobIds: [], runIds: [] });
    expect(w.logs.some((l) => l.includes('left to the store'))).toBe(false);
  });
});
