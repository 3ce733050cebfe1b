import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assistantThreadMethods, storeAreas, WHOLE_CONVERSATION } from '../../src/store/areas.js';
import { type Params, type QueryName, queriesFor } from '../../src/store/queries.js';
import type { Row } from '../../src/store/rows.js';
import { migrate } from '../../src/store/sqlite/sqlite-store.js';
import { areaStatements, HANDED_BACK } from '../helpers/store-statements.js';
import { createRun, followUp, newJob, post, T0 } from './store-contract.js';

const HOUR = 3_600_000;

for (const [handedBack, awaited] of HANDED_BACK) {
  describe(`the store written once, its statements handed back ${handedBack}`, () => {
    it('knows a person once they opened the App Home, and only them', async () => {
      const { db, engine } = areaStatements({ awaited });
      const home = storeAreas(engine);
      expect(await home.homeOpened('U0ALICE')).toBe(false);
      await home.recordHomeOpened('U0ALICE', 'T0TEAM', T0);
      // Resolved only once the write is done: the row is there.
      expect(db.prepare('SELECT user_id AS userId, team_id AS teamId FROM home_views').all()).toEqual([
        { userId: 'U0ALICE', teamId: 'T0TEAM' },
      ]);
      expect(await home.homeOpened('U0ALICE')).toBe(true);
      expect(await home.homeOpened('U0BOB')).toBe(false);
      db.close();
    });

    it('runs each operation of several statements to its end, in its transaction', async () => {
      const { db, engine } = areaStatements({ awaited, clock: () => T0 });
      const store = storeAreas(engine);
      const { job, run, created } = await store.insertJob(newJob('ops'), createRun(), T0);
      expect(created).toBe(true);
      expect((await store.insertFollowUp(job.id, followUp('1700000000.000200'), T0 + 1)).run.seq).toBe(2);
      expect(await store.apply({ jobId: job.id, job: { phase: 'active' }, enqueue: [] }, T0 + 2)).toBe(true);
      expect(
        await store.applyAll(
          [
            { jobId: job.id, expect: { phase: 'active', runCount: 0 }, job: { phase: 'idle' } },
            { jobId: job.id, expect: { phase: 'active', runCount: 0 }, job: { phase: 'gone' } },
          ],
          T0 + 3,
        ),
      ).toEqual([true, false]);
      await store.enqueue([{ jobId: job.id, dedupeKey: 'k', payload: post('Hello') }], T0 + 4);
      const quota = { perUser: 1, perProject: 5, windowMs: HOUR, defaultProject: 'docs' };
      expect(await store.reserveUse(run.id, quota, T0 + 5)).toEqual({ reserved: true });
      expect(await store.figures(T0, 1_000)).toMatchObject({
        activeJobs: 0,
        outboxBacklog: 1,
        uses: [{ projectId: null, count: 1 }],
      });
      await store.rehearseInsert(newJob('rehearsed'), createRun(), T0 + 6);
      expect(await store.recentJobs({ channelId: 'C0DOCS' }, 10)).toHaveLength(1);
      expect((await store.getRuns(job.id)).map((r) => r.seq)).toEqual([1, 2]);
      const old = await store.insertJob(newJob('old'), createRun(), T0);
      const done = { phase: 'idle' as const };
      await store.apply(
        { jobId: old.job.id, job: done, run: { id: old.run.id, patch: { state: 'sent' } } },
        T0,
      );
      expect(await store.eraseExpired(T0 + HOUR, '(erased)', T0 + HOUR, 10)).toMatchObject({ jobs: 1 });
      expect((await store.getJob(old.job.id))?.instruction).toBe('(erased)');
      db.close();
    });

    it('undoes all of an operation that fails halfway', async () => {
      const { db, engine } = areaStatements({ awaited });
      const store = storeAreas(engine);
      const { job } = await store.insertJob(newJob('undone'), createRun(), T0);
      // The second item's payload is no payload: the first item is not kept either.
      const broken = { jobId: job.id, dedupeKey: 'b', payload: undefined as never };
      await expect(
        store.enqueue([{ jobId: job.id, dedupeKey: 'a', payload: post('First') }, broken], T0),
      ).rejects.toThrow();
      expect(db.prepare('SELECT COUNT(*) AS n FROM outbox').get()).toEqual({ n: 0 });
      db.close();
    });
  });
}

const DM = 'D0ALICE';
const THREAD = '1700000000.000100';

describe('assistant threads, on the shared statements', () => {
  let db: Database.Database;
  /** Every statement run, in order; `delay` makes writes finish later, as a database server's do. */
  let ran: { name: QueryName; params: Params }[];
  let delay: boolean;
  let methods: ReturnType<typeof assistantThreadMethods>;

  beforeEach(() => {
    db = new Database(':memory:');
    migrate(db);
    ran = [];
    delay = false;
    const sql = queriesFor('sqlite');
    methods = assistantThreadMethods({
      one: (name, params, parse) => {
        ran.push({ name, params });
        const row = db.prepare(sql[name]).get(params) as Record<string, unknown> | undefined;
        return row === undefined ? undefined : parse(row as Row);
      },
      write: (name, params) => {
        ran.push({ name, params });
        const changes = () => db.prepare(sql[name]).run(params).changes;
        return delay ? new Promise((resolve) => setImmediate(() => resolve(changes()))) : changes();
      },
    });
  });
  afterEach(() => {
    db.close();
  });

  it('keeps the channel of the latest event, not of one re-delivered late', async () => {
    const thread = { channelId: DM, threadTs: THREAD };
    expect(await methods.assistantThread(DM, THREAD)).toBeUndefined();
    await methods.recordAssistantThread({ ...thread, contextChannelId: 'C0FIRST' }, T0);
    await methods.recordAssistantThread({ ...thread, contextChannelId: 'C0SECOND' }, T0 + 20);
    await methods.recordAssistantThread({ ...thread, contextChannelId: 'C0LATE' }, T0 + 10);
    expect(await methods.assistantThread(DM, THREAD)).toEqual({ contextChannelId: 'C0SECOND' });
    // An event at the same time as the last one is the newer word on it.
    await methods.recordAssistantThread({ ...thread, contextChannelId: null }, T0 + 20);
    expect(await methods.assistantThread(DM, THREAD)).toEqual({ contextChannelId: null });
  });

  it('records what the whole conversation is beside apart from each of its threads', async () => {
    await methods.recordAssistantThread(
      { channelId: DM, threadTs: WHOLE_CONVERSATION, contextChannelId: 'C0PANE' },
      T0,
    );
    await methods.recordAssistantThread(
      { channelId: DM, threadTs: THREAD, contextChannelId: 'C0THREAD' },
      T0,
    );
    expect(await methods.assistantThread(DM, WHOLE_CONVERSATION)).toEqual({ contextChannelId: 'C0PANE' });
    expect(await methods.assistantThread(DM, THREAD)).toEqual({ contextChannelId: 'C0THREAD' });
    expect(await methods.assistantThread('D0BOB', WHOLE_CONVERSATION)).toBeUndefined();
  });

  it('a message in the thread moves its time forward only, and never records an unknown thread', async () => {
    const thread = { channelId: DM, threadTs: THREAD };
    await methods.touchAssistantThread(thread, T0);
    expect(await methods.assistantThread(DM, THREAD)).toBeUndefined();
    await methods.recordAssistantThread({ ...thread, contextChannelId: 'C0FIRST' }, T0 + 10);
    await methods.touchAssistantThread(thread, T0 + 30);
    await methods.touchAssistantThread(thread, T0 + 5);
    const at = () => db.prepare('SELECT updated_at AS at FROM assistant_threads').get() as { at: number };
    expect(at().at).toBe(T0 + 30);
    // An event older than the last message no longer changes the channel.
    await methods.recordAssistantThread({ ...thread, contextChannelId: 'C0STALE' }, T0 + 20);
    expect(await methods.assistantThread(DM, THREAD)).toEqual({ contextChannelId: 'C0FIRST' });
  });

  it('resolves a record only once the engine’s write has finished', async () => {
    delay = true;
    await methods.recordAssistantThread({ channelId: DM, threadTs: THREAD, contextChannelId: 'C0DOCS' }, T0);
    expect(db.prepare('SELECT COUNT(*) AS n FROM assistant_threads').get()).toEqual({ n: 1 });
    await methods.touchAssistantThread({ channelId: DM, threadTs: THREAD }, T0 + 1);
    expect(ran.map((r) => [r.name, r.params])).toEqual([
      ['recordAssistantThread', { channelId: DM, threadTs: THREAD, contextChannelId: 'C0DOCS', at: T0 }],
      ['touchAssistantThread', { channelId: DM, threadTs: THREAD, at: T0 + 1 }],
    ]);
  });
});
