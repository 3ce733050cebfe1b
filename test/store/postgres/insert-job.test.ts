import { beforeEach, describe, expect, it } from 'vitest';
import { type PgStore, postgresAvailable, shownUrl, twoStoresOnFreshSchema } from '../../helpers/postgres.js';
import { createRun, followUp, newJob, post, T0 } from '../store-contract.js';

const server = await postgresAvailable();
const THREAD = '1700000000.000100';

/** Two instances of the bot on one database, each recording what Slack sent it. */
describe.runIf(server.ok)('recording jobs on PostgreSQL from several instances at once', () => {
  let a: PgStore;
  let b: PgStore;
  twoStoresOnFreshSchema(4, (first, second) => {
    a = first;
    b = second;
  });
  const both = <T>(work: (store: PgStore, i: number) => Promise<T>) =>
    Promise.all([a, b, a, b].map((store, i) => work(store, i)));
  const count = async (table: string) =>
    Number((await a.pool.query(`SELECT COUNT(*) AS n FROM ${table}`)).rows[0].n);

  beforeEach(async () => {
    await a.pool.query('TRUNCATE jobs, runs, outbox RESTART IDENTITY CASCADE');
  });

  it('records a trigger key sent to every instance once, each answered with that job and its first run', async () => {
    const results = await both((store) => store.insertJob(newJob('k1'), createRun(), T0));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.job.id)).size).toBe(1);
    expect(new Set(results.map((r) => r.run.id)).size).toBe(1);
    expect([await count('jobs'), await count('runs')]).toEqual([1, 1]);
  });

  it('keeps one job per thread when different starts in it arrive at once', async () => {
    const results = await both((store, i) =>
      store.insertJob(newJob(`start-${i}`, { threadTs: THREAD }), createRun(), T0),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.job.id)).size).toBe(1);
    expect(await count('jobs')).toBe(1);
  });

  it('records a reply re-delivered to every instance once, and numbers different replies one after another', async () => {
    const { job } = await a.insertJob(newJob('replies'), createRun(), T0);
    const same = await both((store) => store.insertFollowUp(job.id, followUp('1.1'), T0 + 1));
    expect(same.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(same.map((r) => r.run.id)).size).toBe(1);
    await both((store, i) => store.insertFollowUp(job.id, followUp(`2.${i}`), T0 + 2));
    expect((await a.getRuns(job.id)).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('lets one of several retries pressed at once replace the job, which moves aside once', async () => {
    const { job: old } = await a.insertJob(newJob('old', { threadTs: THREAD }), createRun(), T0);
    await a.apply({ jobId: old.id, job: { phase: 'gone' } }, T0);
    const results = await both((store, i) =>
      store.insertJob(
        newJob('retry-of-old', {
          threadTs: THREAD,
          replaces: {
            jobId: old.id,
            from: 'gone',
            to: 'retried',
            enqueue: [{ jobId: old.id, dedupeKey: `retried-${i}`, payload: post('Tried again') }],
          },
        }),
        createRun(),
        T0 + 1,
      ),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.job.id)).size).toBe(1);
    expect((await a.getJob(old.id))?.phase).toBe('retried');
    expect((await a.findJobByThread('C0DOCS', THREAD))?.triggerKey).toBe('retry-of-old');
    expect(await count('outbox')).toBe(1);
  });

  it('leaves nothing of a rehearsed insert', async () => {
    await a.rehearseInsert(newJob('rehearsed', { threadTs: THREAD }), createRun(), T0);
    expect([await count('jobs'), await count('runs')]).toEqual([0, 0]);
    // Nor does it stand in the way of the real one.
    expect((await b.insertJob(newJob('rehearsed', { threadTs: THREAD }), createRun(), T0)).created).toBe(
      true,
    );
  });
});

if (!server.ok) console.warn(`PostgreSQL insert tests NOT RUN: no server at ${shownUrl()} (${server.why})`);
