import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { carryOnMessage, type JobService, runRecorded } from '../../src/jobs/job-service.js';
import { TEAM } from '../helpers/fake-network.js';
import { recordingOf, startRequest } from '../helpers/job-requests.js';
import { CHANNEL, createJobWorld, INSTANCE, type JobWorld, REQUESTER } from '../helpers/job-world.js';
import { createListenerWorld, type ListenerWorld } from '../helpers/listener-deps.js';

describe('the job service', () => {
  const THREAD = '1700000000.000001';

  let w: JobWorld;
  let jobs: JobService;
  afterEach(async () => {
    jobs.stop();
    vi.useRealTimers();
    await w.store.close();
  });

  function setUp(env: Record<string, string> = {}, verificationRetryMs?: number) {
    w = createJobWorld(env);
    jobs = w.service(verificationRetryMs !== undefined ? { verificationRetryMs } : {});
  }

  const command = () => recordingOf(jobs, w).command(startRequest({ responseUrl: null }));

  const replyIn = (messageTs: string, text = 'Also the SDK') =>
    jobs.acceptReply({
      teamId: TEAM,
      channelId: CHANNEL,
      threadTs: THREAD,
      messageTs,
      userId: REQUESTER,
      text,
    });

  describe('createJobService', () => {
    it('accepts an instruction and starts it with the agent: the flows are wired to one another', async () => {
      setUp();
      const id = await command();
      expect(typeof id).toBe('number');
      expect((await w.job(id as number)).phase).toBe('accepted');
      await jobs.startJob(id as number);
      expect(await w.job(id as number)).toMatchObject({ phase: 'active', agentJobId: 'job_test_1' });
      expect(w.agent.createJob).toHaveBeenCalledOnce();
    });

    it('checks an instruction held for verification again after the configured first wait', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      setUp({}, 1_000);
      w.slack.userInfo.mockRejectedValueOnce(new Error('ratelimited'));
      const id = (await command()) as number;
      await jobs.startJob(id);
      expect(w.agent.createJob).not.toHaveBeenCalled();
      expect(w.outboxKeys()).toContain(`held:job:${id}`);

      await vi.advanceTimersByTimeAsync(999);
      await w.background();
      expect(w.agent.createJob).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      await w.background();
      expect(w.agent.createJob).toHaveBeenCalledOnce();
      expect((await w.job(id)).phase).toBe('active');
    });

    it('withdraws, for a stop, the replies the service recorded and has not sent', async () => {
      setUp({ FOLLOW_UP_BATCH_MS: '5000' });
      const { job } = await w.activeJob();
      const runId = (await replyIn('1700000300.000300')) as number;
      const withdrawn = await jobs.withdrawWaiting(await w.job(job.id));
      expect(withdrawn.map((r) => r.id)).toEqual([runId]);
      expect((await w.store.getRun(runId))?.state).toBe('failed');
    });
  });

  describe('stop', () => {
    /** Lets a batch window of 5 s pass, on the flows' clock and on their timers. */
    async function windowPasses() {
      w.advance(5_000);
      await vi.advanceTimersByTimeAsync(5_000);
      await w.background();
    }

    it('stops waiting for batch windows: a waiting reply stays ready for whoever takes over', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      setUp({ FOLLOW_UP_BATCH_MS: '5000' });
      await w.activeJob();
      const runId = (await replyIn('1700000300.000300')) as number;
      await jobs.processReply(runId, TEAM);
      expect((await w.store.getRun(runId))?.state).toBe('ready');

      jobs.stop();
      await windowPasses();
      expect(w.agent.sendMessage).not.toHaveBeenCalled();
      expect((await w.store.getRun(runId))?.state).toBe('ready');
    });

    it('without a stop, the same reply goes out when its window ends', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      setUp({ FOLLOW_UP_BATCH_MS: '5000' });
      await w.activeJob();
      const runId = (await replyIn('1700000300.000300')) as number;
      await jobs.processReply(runId, TEAM);
      await windowPasses();
      expect(w.agent.sendMessage).toHaveBeenCalledOnce();
    });
  });

  describe('handBack', () => {
    it('leaves the jobs and follow-ups it has no slot for to the next take-over round', async () => {
      setUp();
      const { job } = await w.insertJob();
      const { job: active } = await w.activeJob();
      const run = await w.insertFollowUp(active.id, { authorId: REQUESTER, messageTs: '1700000300.000300' });
      await jobs.handBack({ jobIds: [job.id], runIds: [run.id] });
      expect((await w.job(job.id)).owner).toBeNull();
      expect((await w.store.getRun(run.id))?.owner).toBeNull();
      expect(w.logs.some((l) => l.includes('left to the store for the next take-over round'))).toBe(true);
    });

    it('with nothing to leave, writes and logs nothing', async () => {
      setUp();
      const release = vi.spyOn(w.store, 'handBack');
      await jobs.handBack({});
      await jobs.handBack({ jobIds: [], runIds: [] });
      expect(release).not.toHaveBeenCalled();
      expect(w.logs.some((l) => l.includes('left to the store'))).toBe(false);
    });

    it('never rejects when the store cannot be written: the work stays this instance’s', async () => {
      setUp();
      const { job } = await w.insertJob();
      vi.spyOn(w.store, 'handBack').mockRejectedValueOnce(new Error('database is locked'));
      await expect(jobs.handBack({ jobIds: [job.id] })).resolves.toBeUndefined();
      expect((await w.job(job.id)).owner).toBe(INSTANCE);
      expect(
        w.logs.some((l) => l.includes('carried on at the next start') && l.includes('"level":"error"')),
      ).toBe(true);
    });
  });
});

describe('recorded work handed on', () => {
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
});
