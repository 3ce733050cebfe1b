import { describe, expect, it } from 'vitest';
import { outboxMethods } from '../../src/store/outbox.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { areaStatements, HANDED_BACK } from '../helpers/store-statements.js';
import { createRun, newJob, post, T0 } from './store-contract.js';

for (const [handedBack, awaited] of HANDED_BACK) {
  describe(`the outbox's single statements, handed back ${handedBack}`, () => {
    it('reads what is due, records an attempt, and says when the next one is wanted', async () => {
      const store = openSqliteStore(':memory:');
      const outbox = outboxMethods(areaStatements({ awaited, db: store.db }).engine);
      expect(await outbox.nextOutboxAt(T0)).toBeUndefined();
      await store.enqueue([{ jobId: null, dedupeKey: null, payload: post('Hello') }], T0);
      const [item] = await outbox.dueOutbox(T0, 10);
      expect(item?.payload).toEqual(post('Hello'));
      if (!item) throw new Error('nothing due');
      expect(await outbox.updateOutbox(item.id, { attempts: 1, nextAttemptAt: T0 + 500 })).toBe(true);
      expect(await outbox.nextOutboxAt(T0)).toBe(T0 + 500);
      expect(await outbox.dueOutbox(T0, 10)).toEqual([]);
      // A patch of no column changes nothing, and says so.
      expect(await outbox.updateOutbox(item.id, {})).toBe(false);
      expect(await outbox.updateOutbox(item.id + 100, { attempts: 2 })).toBe(false);
      await store.close();
    });

    it('finds the newest card update of a job and marks those up to it delivered', async () => {
      const store = openSqliteStore(':memory:');
      const outbox = outboxMethods(areaStatements({ awaited, db: store.db }).engine);
      const { job } = await store.insertJob(newJob('card'), createRun(), T0);
      expect(await outbox.latestCardUpdate(job.id)).toBeUndefined();
      const card = { type: 'update_root', channel: 'C0DOCS', ts: '1700000000.000100' } as const;
      await store.enqueue(
        [
          { jobId: job.id, dedupeKey: null, payload: card },
          { jobId: job.id, dedupeKey: null, payload: card },
        ],
        T0,
      );
      const latest = await outbox.latestCardUpdate(job.id);
      expect(latest).toBeDefined();
      await outbox.supersedeCardUpdates(job.id, latest ?? 0, 'instance-a', T0 + 1);
      expect(await outbox.latestCardUpdate(job.id)).toBeUndefined();
      expect((await outbox.dueOutbox(T0 + 1, 10)).filter((i) => i.jobId === job.id)).toEqual([]);
      await store.close();
    });
  });
}
