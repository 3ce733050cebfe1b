/**
 * The hourly limits every Store implementation must hold: a use is checked and reserved in one
 * step, so simultaneous instructions never get past a limit, on one instance or several.
 * `open` returns a fresh, empty store; `peer`, when given, opens a second store on the database
 * `open` last returned (another instance). The suite closes both.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewJob, Store, UseQuota, UseReservation } from '../../src/store/types.js';
import { createRun, followUp, newJob, T0 } from './store-contract.js';

const HOUR = 3_600_000;
const quota = (overrides: Partial<UseQuota> = {}): UseQuota => ({
  perUser: 100,
  perProject: 100,
  defaultProject: 'proj-default',
  windowMs: HOUR,
  ...overrides,
});
const reservedCount = (answers: UseReservation[]) => answers.filter((a) => a.reserved).length;

export function usesContract(
  name: string,
  open: () => Promise<Store> | Store,
  peer?: () => Promise<Store> | Store,
): void {
  describe(`Store contract, hourly limits: ${name}`, () => {
    let store: Store;
    let other: Store | undefined;

    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await other?.close();
      other = undefined;
      await store.close();
    });

    /** Records a job started by `requesterId` and returns its first run's id. */
    async function start(key: string, overrides: Partial<NewJob> = {}, at = T0): Promise<number> {
      const requesterId = overrides.requesterId ?? 'U0ALICE';
      const { run } = await store.insertJob(
        newJob(key, { projectId: 'proj-a', ...overrides, requesterId }),
        { ...createRun(), authorId: requesterId },
        at,
      );
      return run.id;
    }

    it('reserves exactly the limit of simultaneous instructions from one person, and says when the next can pass', async () => {
      const runs = [];
      for (let i = 0; i < 15; i++) runs.push(await start(`burst-${i}`));
      const answers = await Promise.all(
        runs.map((id) => store.reserveUse(id, quota({ perUser: 3 }), T0 + 100)),
      );
      expect(reservedCount(answers)).toBe(3);
      for (const answer of answers.filter((a) => !a.reserved)) {
        expect(answer).toEqual({ reserved: false, limit: 'user', count: 3, freeAt: T0 + 100 + HOUR });
      }
      expect(await store.recentInstructions('U0ALICE', T0)).toEqual({ count: 3, oldest: T0 + 100 });
      // Someone else is not held back by Alice's limit.
      const bob = await start('bob', { requesterId: 'U0BOB' });
      expect(await store.reserveUse(bob, quota({ perUser: 3 }), T0 + 101)).toEqual({ reserved: true });
    });

    it('reserves exactly a project’s limit across people; jobs recorded without a project count as the default’s', async () => {
      const inA = [];
      const inDefault = [];
      for (let i = 0; i < 10; i++) inA.push(await start(`a-${i}`, { requesterId: `U0A${i}` }));
      for (let i = 0; i < 6; i++) {
        const projectId = i % 2 === 0 ? null : 'proj-default';
        inDefault.push(await start(`d-${i}`, { requesterId: `U0D${i}`, projectId }));
      }
      const answers = await Promise.all(
        [...inA, ...inDefault].map((id) => store.reserveUse(id, quota({ perProject: 4 }), T0 + 5)),
      );
      expect(reservedCount(answers.slice(0, 10))).toBe(4);
      expect(reservedCount(answers.slice(10))).toBe(4);
      for (const answer of answers.filter((a) => !a.reserved)) {
        expect(answer).toMatchObject({ reserved: false, limit: 'project', count: 4, freeAt: T0 + 5 + HOUR });
      }
      const used = await store.instructionsSince(T0);
      const count = (project: string | null) => used.find((u) => u.projectId === project)?.count ?? 0;
      expect(count('proj-a')).toBe(4);
      expect(count(null) + count('proj-default')).toBe(4);
    });

    it('counts a run once however often it is reserved', async () => {
      const run = await start('twice');
      expect(await store.reserveUse(run, quota({ perUser: 1 }), T0)).toEqual({ reserved: true });
      expect(await store.reserveUse(run, quota({ perUser: 1 }), T0 + 1)).toEqual({ reserved: true });
      expect(await store.recentInstructions('U0ALICE', T0 - 1)).toEqual({ count: 1, oldest: T0 });
      await expect(store.reserveUse(run + 1_000, quota(), T0)).rejects.toThrow(/no run/);
    });

    it('stops counting a use whose run failed, keeps sent and unknown ones, and forgets uses older than the window', async () => {
      const limit = quota({ perUser: 2 });
      const a = await start('a');
      const b = await start('b');
      const c = await start('c');
      const d = await start('d');
      const setState = async (runId: number, state: 'failed' | 'unknown' | 'sent', at: number) => {
        const jobId = (await store.getRun(runId))?.jobId ?? 0;
        await store.apply({ jobId, run: { id: runId, patch: { state } } }, at);
      };
      expect((await store.reserveUse(a, limit, T0)).reserved).toBe(true);
      expect((await store.reserveUse(b, limit, T0 + 10)).reserved).toBe(true);
      expect(await store.reserveUse(c, limit, T0 + 20)).toMatchObject({ reserved: false, freeAt: T0 + HOUR });
      // a never reached the agent: its use is released.
      await setState(a, 'failed', T0 + 21);
      expect((await store.reserveUse(c, limit, T0 + 22)).reserved).toBe(true);
      // b's outcome is unknown: it may have reached the agent, so it still counts.
      await setState(b, 'unknown', T0 + 23);
      await setState(c, 'sent', T0 + 23);
      expect(await store.reserveUse(d, limit, T0 + 24)).toMatchObject({
        reserved: false,
        freeAt: T0 + 10 + HOUR,
      });
      // An hour after b, only c is left in the window.
      expect((await store.reserveUse(d, limit, T0 + 11 + HOUR)).reserved).toBe(true);
    });

    it('counts replies sent together as one use of the project, as the status report does, and each against its author', async () => {
      const limit = quota({ perProject: 3 });
      const first = await start('batch');
      const jobId = (await store.getRun(first))?.jobId ?? 0;
      expect((await store.reserveUse(first, limit, T0)).reserved).toBe(true);
      await store.apply({ jobId, run: { id: first, patch: { state: 'sent', sentAt: T0 } } }, T0);
      const replies = [];
      for (const ts of ['8.1', '8.2']) {
        const { run } = await store.insertFollowUp(jobId, followUp(ts), T0 + 1);
        expect((await store.reserveUse(run.id, limit, T0 + 1)).reserved).toBe(true);
        await store.apply({ jobId, run: { id: run.id, patch: { state: 'ready' } } }, T0 + 1);
        replies.push(run.id);
      }
      const elsewhere = await start('elsewhere', { requesterId: 'U0CAROL' });
      expect(await store.reserveUse(elsewhere, limit, T0 + 2)).toMatchObject({
        reserved: false,
        limit: 'project',
      });
      expect(await store.instructionsSince(T0 - 1)).toEqual([{ projectId: 'proj-a', count: 3 }]);

      expect(await store.claimReadyRuns(jobId, 'i-1', T0 + 3, 60_000)).toHaveLength(2);
      expect(await store.instructionsSince(T0 - 1)).toEqual([{ projectId: 'proj-a', count: 2 }]);
      expect((await store.reserveUse(elsewhere, limit, T0 + 4)).reserved).toBe(true);
      expect(await store.recentInstructions('U0BOB', T0 - 1)).toEqual({ count: 2, oldest: T0 + 1 });
    });

    it('holds the limits when two instances reserve at the same time', async () => {
      other = peer ? await peer() : undefined;
      const stores = [store, other ?? store];
      const mine = [];
      for (let i = 0; i < 16; i++) mine.push(await start(`two-${i}`));
      const answers = await Promise.all(
        mine.map(
          (id, i) => stores[i % 2]?.reserveUse(id, quota({ perUser: 3 }), T0 + i) as Promise<UseReservation>,
        ),
      );
      expect(reservedCount(answers)).toBe(3);

      const many = [];
      for (let i = 0; i < 16; i++)
        many.push(await start(`many-${i}`, { requesterId: `U0P${i}`, projectId: 'proj-b' }));
      const project = await Promise.all(
        many.map(
          (id, i) =>
            stores[i % 2]?.reserveUse(id, quota({ perProject: 5 }), T0 + i) as Promise<UseReservation>,
        ),
      );
      expect(reservedCount(project)).toBe(5);
    });
  });
}
