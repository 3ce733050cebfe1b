import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newJobParams } from '../../../src/store/inserts.js';
import { migratePostgres, types } from '../../../src/store/postgres/postgres-store.js';
import {
  exec,
  inTransaction,
  many,
  one,
  type Queryable,
  updateRow,
  write,
} from '../../../src/store/postgres/statements.js';
import { MissingParameterError } from '../../../src/store/queries.js';
import { parseId, parseJob } from '../../../src/store/rows.js';
import { dropFreshSchema, freshSchemaUrl, postgresAvailable, shownUrl } from '../../helpers/postgres.js';
import { newJob, T0 } from '../store-contract.js';

const server = await postgresAvailable();

describe.runIf(server.ok)('PostgreSQL statements by name', () => {
  let url: string;
  let pool: pg.Pool;
  /** The pool, with the text of every statement sent through it kept. */
  const sent: string[] = [];
  const recorded: Queryable = {
    query: ((text: string, values: unknown[]) => {
      sent.push(text);
      return pool.query(text, values);
    }) as Queryable['query'],
  };
  const insert = (triggerKey: string) =>
    one(pool, 'insertJob', newJobParams(newJob(triggerKey), T0), parseId);

  beforeAll(async () => {
    url = await freshSchemaUrl();
    pool = new pg.Pool({ connectionString: url, max: 2, types });
    await migratePostgres(pool);
  });
  afterAll(async () => {
    await pool.end();
    await dropFreshSchema(url);
  });

  it('bind named parameters, and parse the first row or every row', async () => {
    expect(await insert('s1')).toEqual({ id: 1 });
    // A repeated trigger key: no row.
    expect(await insert('s1')).toBeUndefined();
    const second = (await insert('s2'))?.id;
    expect(second).toBeGreaterThan(1);
    expect(await one(pool, 'jobById', { jobId: second }, parseJob)).toMatchObject({
      id: second,
      triggerKey: 's2',
    });
    expect(await one(pool, 'jobById', { jobId: 99 }, parseJob)).toBeUndefined();
    const recent = await many(pool, 'recentJobsOfChannel', { channelId: 'C0DOCS', limit: 10 }, parseJob);
    expect(recent.map((j) => j.triggerKey)).toEqual(['s2', 's1']);
  });

  it('count the rows a write changed', async () => {
    const { id } = (await insert('s3')) ?? { id: 0 };
    const move = { jobId: id, from: 'accepted', to: 'posting', now: T0 + 1 };
    expect(await write(pool, 'transitionJob', move)).toBe(1);
    expect(await write(pool, 'transitionJob', move)).toBe(0);
  });

  it('refuse a statement whose parameter is missing before sending it', async () => {
    sent.length = 0;
    expect(() => exec(recorded, 'jobById', {})).toThrow(MissingParameterError);
    await expect(one(recorded, 'jobById', {}, parseJob)).rejects.toThrow(MissingParameterError);
    expect(sent).toEqual([]);
  });

  it('run PostgreSQL’s own statements too', async () => {
    const result = await exec(pool, 'lockJobPostgres', { jobId: 1 });
    expect(result.rows).toEqual([{ id: 1 }]);
  });

  it('patch a row by its defined keys, fenced by a claim when given, and send nothing for an empty patch', async () => {
    const { id } = (await insert('s4')) ?? { id: 0 };
    sent.length = 0;
    expect(await updateRow(recorded, 'jobs', id, { lastError: undefined })).toBe(0);
    expect(sent).toEqual([]);
    expect(
      await updateRow(recorded, 'jobs', id, { lastError: "x'); DROP TABLE jobs; --", pollFailures: 2 }),
    ).toBe(1);
    expect(sent).toEqual(['UPDATE jobs SET last_error = $1, poll_failures = $2 WHERE id = $3']);
    expect(await one(pool, 'jobById', { jobId: id }, parseJob)).toMatchObject({
      lastError: "x'); DROP TABLE jobs; --",
      pollFailures: 2,
    });
    // Claimed by nobody: a claimant's patch changes nothing.
    expect(await updateRow(pool, 'jobs', id, { pollFailures: 3 }, 'i-1')).toBe(0);
  });

  it('commit a transaction’s work, and undo all of it when the work fails', async () => {
    const id = await inTransaction(
      pool,
      async (db) => (await one(db, 'insertJob', newJobParams(newJob('t1'), T0), parseId))?.id,
    );
    expect(await one(pool, 'jobById', { jobId: id }, parseJob)).toMatchObject({ id, triggerKey: 't1' });
    const failure = new Error('the work failed');
    await expect(
      inTransaction(pool, async (db) => {
        await one(db, 'insertJob', newJobParams(newJob('t2'), T0), parseId);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await one(pool, 'jobByTrigger', { triggerKey: 't2' }, parseJob)).toBeUndefined();
  });

  it('discard a connection that ends inside a transaction, failing only that transaction', async () => {
    const before = pool.totalCount;
    await expect(
      inTransaction(pool, async (db) => {
        await db.query('SELECT pg_terminate_backend(pg_backend_pid())');
      }),
    ).rejects.toThrow(/terminating connection/);
    expect(pool.totalCount).toBe(Math.max(0, before - 1));
    // The broken connection is not handed to the next caller.
    const id = await inTransaction(
      pool,
      async (db) => (await one(db, 'insertJob', newJobParams(newJob('t3'), T0), parseId))?.id,
    );
    expect(id).toBeGreaterThan(0);
  });
});

if (!server.ok)
  console.warn(`PostgreSQL statement tests NOT RUN: no server at ${shownUrl()} (${server.why})`);
