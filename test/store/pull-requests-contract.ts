/**
 * Pull requests followed, as every Store implementation must keep them: found once per job and
 * link, claimed by one instance at a time, written only under that claim, paused together, and
 * summed per project. `open` returns a fresh, empty store; `second`, when given, another
 * connection to the same one (another instance). Times come from a fixed clock.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewPullRequest, Store } from '../../src/store/types.js';
import { createRun, newJob, post, T0 } from './store-contract.js';

const HOUR = 3_600_000;

export function pullRequestsContract(
  name: string,
  open: () => Promise<Store> | Store,
  second?: () => Promise<Store> | Store,
): void {
  describe(`Store contract, pull requests followed: ${name}`, () => {
    let store: Store;
    let other: Store | undefined;

    beforeEach(async () => {
      store = await open();
      other = second ? await second() : undefined;
    });
    afterEach(async () => {
      await other?.close();
      await store.close();
    });

    /** A job finished at `at` whose run opened `link`. */
    async function finished(key: string, link: string, at = T0, projectId: string | null = null) {
      const { job } = await store.insertJob(newJob(key, { projectId }), createRun(), at);
      await store.apply(
        { jobId: job.id, job: { phase: 'idle', lastOutcome: 'completed_pr', prLink: link } },
        at,
      );
      return job.id;
    }
    const found = (
      jobId: number,
      number: number,
      openedAt = T0,
      projectId: string | null = null,
    ): NewPullRequest => ({
      jobId,
      projectId,
      url: `https://github.com/example/docs/pull/${number}`,
      where: { owner: 'example', repo: 'docs', number },
      openedAt,
      enqueue: [{ jobId, dedupeKey: null, payload: post(`card of ${jobId}`) }],
    });

    it('finds the jobs whose run opened a pull request not yet on record, and records each once', async () => {
      const a = await finished('pr-a', 'https://github.com/example/docs/pull/1', T0 + 10);
      await finished('pr-old', 'https://github.com/example/docs/pull/2', T0 - HOUR);
      expect(
        (await store.pullRequestCandidates(T0, 10)).map((c) => [c.jobId, c.prLink, c.updatedAt]),
      ).toEqual([[a, 'https://github.com/example/docs/pull/1', T0 + 10]]);
      const recorded = await store.followPullRequests([found(a, 1, T0 + 10)], T0 + 20);
      expect(recorded).toMatchObject([
        { jobId: a, number: 1, following: 'following', state: null, nextCheckAt: T0 + 20 },
      ]);
      // Found again (a look that overlaps the one before): left as it is, nothing queued twice.
      expect(await store.followPullRequests([found(a, 1, T0 + 10)], T0 + 30)).toEqual([]);
      expect(await store.pullRequestCandidates(T0, 10)).toEqual([]);
      expect((await store.dueOutbox(T0 + 40, 10)).filter((i) => i.jobId === a)).toHaveLength(1);
    });

    it('claims a due pull request for one instance only, and writes a check only under that claim', async () => {
      const job = await finished('pr-claim', 'https://github.com/example/docs/pull/1');
      const [pr] = await store.followPullRequests([found(job, 1)], T0);
      const mine = await store.claimDuePullRequests('i-one', T0 + 1, 10, 60_000);
      expect(mine.map((p) => p.id)).toEqual([pr?.id]);
      expect(await (other ?? store).claimDuePullRequests('i-two', T0 + 1, 10, 60_000)).toEqual([]);
      expect(await store.nextPullRequestCheckAt(T0 + 1)).toBeUndefined();
      // Not the claimant: nothing written, nothing queued.
      const notice = { jobId: job, dedupeKey: 'pull-request-ended:1:1', payload: post('merged') };
      expect(
        await (other ?? store).recordPullRequestCheck(
          pr?.id ?? 0,
          'i-two',
          { state: 'merged' },
          [notice],
          T0 + 2,
        ),
      ).toBe(false);
      expect(
        await store.recordPullRequestCheck(
          pr?.id ?? 0,
          'i-one',
          { state: 'open', title: 'A title', etag: '"e1"', nextCheckAt: T0 + 60_000 },
          [],
          T0 + 2,
        ),
      ).toBe(true);
      expect(await store.pullRequestOfJob(job)).toMatchObject({
        state: 'open',
        title: 'A title',
        etag: '"e1"',
        claimedBy: null,
        nextCheckAt: T0 + 60_000,
      });
      expect(await store.nextPullRequestCheckAt(T0 + 3)).toBe(T0 + 60_000);
    });

    it('releases the checks of an instance that is gone or stopped, so its pull requests are checked again at once', async () => {
      const job = await finished('pr-gone', 'https://github.com/example/docs/pull/3');
      await store.followPullRequests([found(job, 3)], T0);
      await store.heartbeat('i-gone');
      expect(await store.claimDuePullRequests('i-gone', T0 + 1, 10, 60_000)).toHaveLength(1);
      await store.takeOverOrphans('i-next', 60_000);
      const again = await store.claimDuePullRequests('i-next', T0 + 1, 10, 60_000);
      if (store.shared) {
        // Several instances: one still heard from keeps its claim; stopped, it gives it up.
        expect(again).toEqual([]);
        await store.retireInstance('i-gone');
        expect(await store.claimDuePullRequests('i-next', T0 + 1, 10, 60_000)).toHaveLength(1);
      } else {
        // One process: an earlier run of it is gone, whatever its heartbeat says.
        expect(again).toHaveLength(1);
      }
    });

    it('queues the notice of an ended pull request once, whoever records it', async () => {
      const job = await finished('pr-once', 'https://github.com/example/docs/pull/1');
      const [pr] = await store.followPullRequests([{ ...found(job, 1), enqueue: [] }], T0);
      const id = pr?.id ?? 0;
      const notice = { jobId: job, dedupeKey: `pull-request-ended:${id}:${job}`, payload: post('merged') };
      await store.claimDuePullRequests('i-one', T0, 10, 60_000);
      expect(
        await store.recordPullRequestCheck(
          id,
          'i-one',
          { state: 'merged', following: 'ended', nextCheckAt: null },
          [notice],
          T0,
        ),
      ).toBe(true);
      const [queuedNotice] = (await store.dueOutbox(T0 + 5, 20)).filter(
        (i) => i.dedupeKey === notice.dedupeKey,
      );
      expect(queuedNotice).toBeDefined();
      await store.updateOutbox(queuedNotice?.id ?? 0, { deliveredAt: T0 + 6 });
      // An instance whose claim ran out and which learnt the same: its notice is the same item.
      await store.enqueue([notice], T0 + 7);
      expect((await store.dueOutbox(T0 + 8, 20)).filter((i) => i.dedupeKey === notice.dedupeKey)).toEqual([]);
    });

    it('pauses every followed pull request until a rate limit ends, and leaves those no longer followed alone', async () => {
      const a = await finished('pr-pause-a', 'https://github.com/example/docs/pull/1');
      const b = await finished('pr-pause-b', 'https://github.com/example/docs/pull/2');
      const [first, second] = await store.followPullRequests([found(a, 1), found(b, 2)], T0);
      await store.claimDuePullRequests('i-one', T0, 1, 60_000);
      await store.recordPullRequestCheck(
        first?.id ?? 0,
        'i-one',
        { following: 'missing', nextCheckAt: null },
        [],
        T0,
      );
      await (other ?? store).pauseFollowing(T0 + HOUR);
      expect((await store.pullRequestOfJob(a))?.nextCheckAt).toBeNull();
      expect((await store.pullRequestOfJob(b))?.nextCheckAt).toBe(T0 + HOUR);
      expect(await store.claimDuePullRequests('i-one', T0 + HOUR - 1, 10, 60_000)).toEqual([]);
      expect((await store.claimDuePullRequests('i-one', T0 + HOUR, 10, 60_000)).map((p) => p.id)).toEqual([
        second?.id,
      ]);
    });

    it('follows a job’s new pull request in place of the one before', async () => {
      const job = await finished('pr-new', 'https://github.com/example/docs/pull/1');
      const [old] = await store.followPullRequests([found(job, 1)], T0);
      const [fresh] = await store.followPullRequests([found(job, 2)], T0 + 1);
      expect((await store.pullRequestOfJob(job))?.id).toBe(fresh?.id);
      const claimed = await store.claimDuePullRequests('i-one', T0 + 2, 10, 60_000);
      expect(claimed.map((p) => p.id)).toEqual([fresh?.id]);
      expect(old?.id).not.toBe(fresh?.id);
    });

    it('sums each project’s pull requests: opened, merged, closed unmerged, still open, median time to merge', async () => {
      const ids: number[] = [];
      for (let i = 0; i < 6; i++)
        ids.push(await finished(`pr-sum-${i}`, `https://github.com/example/docs/pull/${i}`));
      const other = await finished('pr-sum-other', 'https://github.com/example/api/pull/1', T0, 'api-docs');
      await store.followPullRequests(
        [...ids.map((id, i) => found(id, i)), found(other, 99, T0, 'api-docs')],
        T0,
      );
      const claimed = await store.claimDuePullRequests('i-one', T0, 10, 60_000);
      const byJob = new Map(claimed.map((p) => [p.jobId, p.id]));
      const end = (jobId: number, state: 'merged' | 'closed', afterMs: number) =>
        store.recordPullRequestCheck(
          byJob.get(jobId) ?? 0,
          'i-one',
          { state, following: 'ended', endedAt: T0 + afterMs, nextCheckAt: null },
          [],
          T0 + afterMs,
        );
      // Merged after 1, 3 and 10 hours: the median is 3 hours.
      await end(ids[0] as number, 'merged', HOUR);
      await end(ids[1] as number, 'merged', 3 * HOUR);
      await end(ids[2] as number, 'merged', 10 * HOUR);
      await end(ids[3] as number, 'closed', HOUR);
      await store.recordPullRequestCheck(
        byJob.get(ids[4] as number) ?? 0,
        'i-one',
        { following: 'expired', nextCheckAt: null },
        [],
        T0,
      );
      await end(other, 'merged', 2 * HOUR);
      const summaries = await store.pullRequestSummaries();
      const sorted = [...summaries].sort((x, y) => String(x.projectId).localeCompare(String(y.projectId)));
      expect(sorted).toEqual([
        {
          projectId: 'api-docs',
          opened: 1,
          merged: 1,
          closedUnmerged: 0,
          stillOpen: 0,
          medianMergeMs: 2 * HOUR,
        },
        { projectId: null, opened: 6, merged: 3, closedUnmerged: 1, stillOpen: 1, medianMergeMs: 3 * HOUR },
      ]);
    });
  });
}
