/**
 * How the store shares work between instances, run against every Store: heartbeats timed by the
 * store's clock, claims that outlast the calls they guard, and fencing (a write of an instance
 * whose work was taken over is refused, for every kind of work). `sharedClusterContract` holds
 * what only a store several processes share (PostgreSQL) does; on SQLite one process uses the
 * file, so every other instance on record is gone at once.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobPatch, JobRecord, NewJob, NewOutboxItem, Store } from '../../src/store/types.js';
import {
  createRun,
  followUp,
  goQuiet,
  LONG_MS,
  newJob,
  post,
  RAN_OUT,
  T0,
  TIMEOUT_MS,
} from './store-contract.js';

const ids = (records: Array<{ id: number }>) => records.map((r) => r.id);
const texts = (items: { payload: { type: string; text?: string } }[]) =>
  items.map((i) => (i.payload.type === 'post' ? i.payload.text : '?'));
const item = (jobId: number | null, text: string): NewOutboxItem => ({
  jobId,
  dedupeKey: null,
  payload: post(text),
});

/** A store opened fresh for each test, and the helpers the suites share. */
function withStore(open: () => Promise<Store> | Store) {
  const ctx = {} as {
    store: Store;
    job(triggerKey: string, overrides?: Partial<NewJob>): ReturnType<Store['insertJob']>;
    jobWith(triggerKey: string, patch: JobPatch): Promise<JobRecord>;
  };
  beforeEach(async () => {
    ctx.store = await open();
  });
  afterEach(async () => {
    await ctx.store.close();
  });
  ctx.job = (triggerKey, overrides = {}) =>
    ctx.store.insertJob(newJob(triggerKey, overrides), createRun(), T0);
  ctx.jobWith = async (triggerKey, patch) => {
    const { job: created } = await ctx.job(triggerKey);
    await ctx.store.apply({ jobId: created.id, job: patch }, T0);
    const updated = await ctx.store.getJob(created.id);
    if (!updated) throw new Error(`job ${created.id} vanished`);
    return updated;
  };
  return ctx;
}

export function clusterContract(name: string, open: () => Promise<Store> | Store): void {
  describe(`Cluster contract: ${name}`, () => {
    const ctx = withStore(open);

    /** `i-1` stops heartbeating; once it counts as gone, `i-2` takes over what it owned. */
    async function takeOverFromI1() {
      if (ctx.store.shared) await goQuiet(ctx.store);
      await ctx.store.heartbeat('i-2');
      return ctx.store.takeOverOrphans('i-2', TIMEOUT_MS);
    }

    it('returns the store’s time from a heartbeat, and counts who beat within the time-out', async () => {
      const before = Date.now();
      const at = await ctx.store.heartbeat('i-1');
      // This host is the database's too: the two clocks agree here.
      expect(at).toBeGreaterThanOrEqual(before - 1_000);
      expect(at).toBeLessThanOrEqual(Date.now() + 1_000);
      expect(await ctx.store.liveInstances(LONG_MS)).toBe(1);
      expect((await ctx.store.figures(T0, LONG_MS)).liveInstances).toBe(1);
    });

    it('renews a claim only for its owner', async () => {
      const { job: j } = await ctx.job('hold', { owner: 'i-1' });
      expect(await ctx.store.renewClaim('i-1', { jobId: j.id }, LONG_MS)).toBe(true);
      expect((await ctx.store.getJob(j.id))?.ownerUntil).toBeGreaterThan(Date.now() + LONG_MS / 2);
      expect(await ctx.store.renewClaim('i-2', { jobId: j.id }, LONG_MS)).toBe(false);
    });

    it('refuses writes about a job being started once it was taken over', async () => {
      await ctx.store.heartbeat('i-1');
      const { job: j, run } = await ctx.job('fence-job', { owner: 'i-1' });
      const mine = { instanceId: 'i-1', job: true };
      const posting = { jobId: j.id, expect: { phase: 'accepted' as const, runCount: 0 }, owner: mine };
      expect(await ctx.store.apply({ ...posting, job: { phase: 'posting' } }, T0 + 1)).toBe(true);
      expect(ids((await takeOverFromI1()).jobs)).toEqual([j.id]);
      // i-1 comes back (it was frozen, or its clock ran slow): nothing it writes lands.
      const creating = { jobId: j.id, owner: mine, job: { phase: 'creating' as const } };
      expect(await ctx.store.apply({ ...creating, enqueue: [item(j.id, 'late')] }, T0 + 2)).toBe(false);
      expect(await ctx.store.renewClaim('i-1', { jobId: j.id }, LONG_MS)).toBe(false);
      expect(await ctx.store.getJob(j.id)).toMatchObject({ phase: 'posting', owner: 'i-2' });
      expect(await ctx.store.dueOutbox(T0 + 10, 10)).toEqual([]);
      expect((await ctx.store.getRun(run.id))?.state).toBe('pending');
      // The new owner's writes do.
      const theirs = { ...creating, owner: { instanceId: 'i-2', job: true } };
      expect(await ctx.store.apply(theirs, T0 + 3)).toBe(true);
    });

    it('refuses the answer to a follow-up batch once the batch was taken over', async () => {
      await ctx.store.heartbeat('i-1');
      const active = await ctx.jobWith('fence-batch', { phase: 'active', agentJobId: 'a-1' });
      const { run: fu } = await ctx.store.insertFollowUp(active.id, { ...followUp('8.1'), owner: 'i-1' }, T0);
      await ctx.store.apply({ jobId: active.id, run: { id: fu.id, patch: { state: 'ready' } } }, T0 + 1);
      // The claim has run out: i-1 froze inside the call longer than the call can last.
      const batch = await ctx.store.claimReadyRuns(active.id, 'i-1', T0 + 2, RAN_OUT);
      expect(ids(batch)).toEqual([fu.id]);
      expect(ids((await takeOverFromI1()).runs)).toEqual([fu.id]);
      const sent = {
        jobId: active.id,
        owner: { instanceId: 'i-1', runIds: [fu.id] },
        runs: [{ id: fu.id, patch: { state: 'sent' as const } }],
        incrementRunCount: true,
      };
      expect(await ctx.store.apply(sent, T0 + 3)).toBe(false);
      expect(await ctx.store.renewClaim('i-1', { runIds: [fu.id] }, LONG_MS)).toBe(false);
      expect(await ctx.store.getRun(fu.id)).toMatchObject({ state: 'sending', owner: 'i-2' });
      expect((await ctx.store.getJob(active.id))?.runCount).toBe(0);
    });

    it('refuses what an instance decided about an instruction waiting for verification once it was taken over', async () => {
      await ctx.store.heartbeat('i-1');
      // A command and a reply, both waiting while Slack could not confirm their authors.
      const { job: held, run } = await ctx.job('fence-held', { owner: 'i-1' });
      const active = await ctx.jobWith('fence-held-reply', { phase: 'active' });
      const { run: reply } = await ctx.store.insertFollowUp(
        active.id,
        { ...followUp('9.1'), owner: 'i-1' },
        T0,
      );
      const taken = await takeOverFromI1();
      expect([ids(taken.jobs), ids(taken.runs)]).toEqual([[held.id], [reply.id]]);
      const refuse = {
        jobId: held.id,
        owner: { instanceId: 'i-1', job: true },
        job: { phase: 'not_started' as const },
        run: { id: run.id, patch: { state: 'failed' as const } },
      };
      expect(await ctx.store.apply(refuse, T0 + 1)).toBe(false);
      const drop = {
        jobId: active.id,
        owner: { instanceId: 'i-1', runIds: [reply.id] },
        run: { id: reply.id, patch: { state: 'failed' as const } },
      };
      expect(await ctx.store.apply(drop, T0 + 1)).toBe(false);
      expect((await ctx.store.getJob(held.id))?.phase).toBe('accepted');
      expect((await ctx.store.getRun(reply.id))?.state).toBe('pending');
    });

    it('refuses the end of a delivery attempt once another instance claimed the item', async () => {
      await ctx.store.enqueue([item(null, 'once')], T0);
      // i-1's claim ran out (it froze); i-2 claims the item and starts its own attempt.
      const [mine] = await ctx.store.claimOutbox('i-1', T0, 10, RAN_OUT);
      const [theirs] = await ctx.store.claimOutbox('i-2', T0, 10, LONG_MS);
      expect(theirs?.id).toBe(mine?.id);
      const id = mine?.id ?? 0;
      expect(await ctx.store.renewClaim('i-1', { outboxId: id }, LONG_MS)).toBe(false);
      const done = { deliveredAt: T0 + 1, claimedBy: null, claimedUntil: null };
      expect(await ctx.store.updateOutbox(id, done, 'i-1')).toBe(false);
      expect(await ctx.store.nextOutboxAt(T0)).toBeDefined();
      expect(await ctx.store.renewClaim('i-2', { outboxId: id }, LONG_MS)).toBe(true);
      expect(await ctx.store.updateOutbox(id, done, 'i-2')).toBe(true);
      expect(await ctx.store.nextOutboxAt(T0)).toBeUndefined();
      // Delivered: nothing is left to claim.
      expect(await ctx.store.renewClaim('i-2', { outboxId: id }, LONG_MS)).toBe(false);
    });

    it('leaves a poll claim to its claimant: another instance’s release does nothing', async () => {
      const a = await ctx.jobWith('fence-poll', { phase: 'active', nextPollAt: T0 });
      expect(ids(await ctx.store.claimDueJobs('i-1', T0, 10, RAN_OUT))).toEqual([a.id]);
      expect(ids(await ctx.store.claimDueJobs('i-2', T0, 10, LONG_MS))).toEqual([a.id]);
      await ctx.store.releaseJob(a.id, 'i-1');
      expect((await ctx.store.getJob(a.id))?.claimedBy).toBe('i-2');
    });
  });
}

/** What a store several processes share does: it decides by its own clock who is gone. */
export function sharedClusterContract(name: string, open: () => Promise<Store> | Store): void {
  describe(`Cluster contract, shared store: ${name}`, () => {
    const ctx = withStore(open);
    // The moved suites below use these names.
    const jobWith = (triggerKey: string, patch: JobPatch) => ctx.jobWith(triggerKey, patch);
    let store: Store;
    beforeEach(() => {
      store = ctx.store;
    });

    describe('takeOverOrphans', () => {
      it('leaves the work of live instances alone and takes that of instances gone quiet', async () => {
        await store.heartbeat('i-live');
        await store.heartbeat('i-gone');
        await goQuiet(store);
        await store.heartbeat('i-live');
        await store.heartbeat('i-next');
        const live = await store.insertJob(newJob('own-live', { owner: 'i-live' }), createRun(), T0);
        const gone = await store.insertJob(newJob('own-gone', { owner: 'i-gone' }), createRun(), T0);
        const active = await jobWith('own-active', { phase: 'active' });
        const liveRun = await store.insertFollowUp(active.id, { ...followUp('5.1'), owner: 'i-live' }, T0);
        const goneRun = await store.insertFollowUp(active.id, { ...followUp('5.2'), owner: 'i-gone' }, T0);
        expect(liveRun.run.owner).toBe('i-live');

        // i-gone has been quiet for longer than the time-out, i-live beat just now.
        const taken = await store.takeOverOrphans('i-next', TIMEOUT_MS);
        expect(ids(taken.jobs)).toEqual([gone.job.id]);
        expect(ids(taken.runs)).toEqual([goneRun.run.id]);
        expect(taken.runs[0]?.owner).toBe('i-next');
        expect((await store.getJob(live.job.id))?.owner).toBe('i-live');

        // Taken once: neither the adopter nor another instance gets them again.
        expect(await store.takeOverOrphans('i-next', TIMEOUT_MS)).toEqual({ jobs: [], runs: [] });
        expect(await store.takeOverOrphans('i-other', TIMEOUT_MS)).toEqual({ jobs: [], runs: [] });
        // Once i-live goes quiet too, its work is taken; the adopter counts as alive even with no
        // heartbeat of its own on record, so it does not take its own rows again.
        await goQuiet(store);
        await store.heartbeat('i-next');
        const later = await store.takeOverOrphans('i-other', TIMEOUT_MS);
        expect([ids(later.jobs), ids(later.runs)]).toEqual([[live.job.id], [liveRun.run.id]]);
        expect(await store.takeOverOrphans('i-other', TIMEOUT_MS)).toEqual({ jobs: [], runs: [] });
      });

      it('takes the work of an instance that retired at once, whatever its last heartbeat', async () => {
        await store.heartbeat('i-old');
        const left = await store.insertJob(newJob('retired', { owner: 'i-old' }), createRun(), T0);
        expect(await store.renewClaim('i-old', { jobId: left.job.id }, LONG_MS)).toBe(true);
        expect((await store.takeOverOrphans('i-next', LONG_MS)).jobs).toEqual([]);
        // It stopped with a call under way: its claim stays until it runs out.
        await store.retireInstance('i-old', { callsUnderWay: true });
        expect((await store.takeOverOrphans('i-next', LONG_MS)).jobs).toEqual([]);
        // It stopped cleanly: it is inside no call, so its claim ends with it.
        await store.retireInstance('i-old');
        expect(ids((await store.takeOverOrphans('i-next', LONG_MS)).jobs)).toEqual([left.job.id]);
      });

      it('releases the poll claims of gone instances, and only theirs; a delivery claim only once it ran out', async () => {
        await store.heartbeat('i-gone');
        await goQuiet(store);
        await store.heartbeat('i-live');
        await jobWith('claim-live', { phase: 'active', nextPollAt: T0 });
        await jobWith('claim-gone', { phase: 'active', nextPollAt: T0 + 1 });
        const [byLive] = await store.claimDueJobs('i-live', T0 + 10, 1, LONG_MS);
        const [byGone] = await store.claimDueJobs('i-gone', T0 + 10, 1, LONG_MS);
        await store.enqueue([item(null, 'held-live'), item(null, 'held-gone'), item(null, 'ran-out')], T0);
        await store.claimOutbox('i-live', T0 + 10, 1, LONG_MS);
        await store.claimOutbox('i-gone', T0 + 10, 1, LONG_MS);
        expect(texts(await store.claimOutbox('i-gone', T0 + 10, 1, RAN_OUT))).toEqual(['ran-out']);
        expect(await store.dueJobs(T0 + 20, 10)).toEqual([]);
        expect(texts(await store.dueOutbox(T0 + 20, 10))).toEqual(['ran-out']);

        await store.takeOverOrphans('i-next', TIMEOUT_MS);
        expect(ids(await store.dueJobs(T0 + 20, 10))).toEqual([byGone?.id]);
        // A gone instance may be frozen inside the post its claim covers: held until it runs out.
        expect(texts(await store.dueOutbox(T0 + 20, 10))).toEqual(['ran-out']);
        expect((await store.getJob(byLive?.id ?? 0))?.claimedBy).toBe('i-live');
      });
    });

    describe('handBack', () => {
      it('gives a live instance’s unstarted jobs and unsent follow-ups back to the next adoption', async () => {
        await store.heartbeat('i-busy');
        const waiting = await store.insertJob(newJob('rel-accepted', { owner: 'i-busy' }), createRun(), T0);
        const other = await store.insertJob(newJob('rel-other', { owner: 'i-other' }), createRun(), T0);
        const active = await store.insertJob(newJob('rel-active', { owner: 'i-busy' }), createRun(), T0);
        await store.apply({ jobId: active.job.id, job: { phase: 'active', nextPollAt: T0 + 10 } }, T0);
        const reply = await store.insertFollowUp(active.job.id, { ...followUp('6.1'), owner: 'i-busy' }, T0);
        const sent = await store.insertFollowUp(active.job.id, { ...followUp('6.2'), owner: 'i-busy' }, T0);
        await store.apply(
          { jobId: active.job.id, run: { id: sent.run.id, patch: { state: 'sent', sentAt: T0 } } },
          T0,
        );
        // i-busy is alive: its work is not taken.
        await store.heartbeat('i-other');
        expect(await store.takeOverOrphans('i-next', LONG_MS)).toEqual({ jobs: [], runs: [] });

        await store.handBack('i-busy', {
          jobIds: [waiting.job.id, other.job.id, active.job.id],
          runIds: [reply.run.id, sent.run.id],
        });
        // Only what i-busy owned and had still to do is given back.
        expect((await store.getJob(other.job.id))?.owner).toBe('i-other');
        expect((await store.getJob(active.job.id))?.owner).toBe('i-busy');
        expect((await store.getRun(sent.run.id))?.owner).toBe('i-busy');
        // Any instance's next round takes it, the releasing one's included.
        const taken = await store.takeOverOrphans('i-busy', LONG_MS);
        expect([ids(taken.jobs), ids(taken.runs)]).toEqual([[waiting.job.id], [reply.run.id]]);
        expect(taken.jobs[0]?.phase).toBe('accepted');
        expect(taken.runs[0]?.state).toBe('pending');
        expect(await store.takeOverOrphans('i-next', LONG_MS)).toEqual({ jobs: [], runs: [] });
      });

      it('does nothing for an empty list', async () => {
        await store.handBack('i-busy', { jobIds: [], runIds: [] });
      });
    });

    describe('claims and skewed clocks', () => {
      it('never takes over a job whose gone owner may still be inside a call, until the claim runs out', async () => {
        await store.heartbeat('i-1');
        const { job: held } = await store.insertJob(newJob('held-call', { owner: 'i-1' }), createRun(), T0);
        const { job: done } = await store.insertJob(newJob('held-done', { owner: 'i-1' }), createRun(), T0);
        expect(await store.renewClaim('i-1', { jobId: held.id }, LONG_MS)).toBe(true);
        expect(await store.renewClaim('i-1', { jobId: done.id }, RAN_OUT)).toBe(true);
        await goQuiet(store);
        // i-1 is gone by the store's clock; only the job whose claim ran out is taken.
        expect(ids((await store.takeOverOrphans('i-2', TIMEOUT_MS)).jobs)).toEqual([done.id]);
        expect((await store.getJob(held.id))?.owner).toBe('i-1');
      });

      it('decides claims by its own clock: a caller whose clock runs far ahead takes no live claim', async () => {
        const a = await jobWith('skew-poll', { phase: 'active', nextPollAt: T0 });
        await store.enqueue([item(null, 'skew-post')], T0);
        expect(ids(await store.claimDueJobs('i-1', T0, 10, LONG_MS))).toEqual([a.id]);
        expect(texts(await store.claimOutbox('i-1', T0, 10, LONG_MS))).toEqual(['skew-post']);
        // A host a year ahead asks with a due time a year ahead: the claims have not run out.
        const yearAhead = Date.now() + 365 * 24 * 3_600_000;
        expect(await store.claimDueJobs('i-2', yearAhead, 10, LONG_MS)).toEqual([]);
        expect(await store.claimOutbox('i-2', yearAhead, 10, LONG_MS)).toEqual([]);
        expect(await store.dueJobs(yearAhead, 10)).toEqual([]);
      });
    });
  });
}
