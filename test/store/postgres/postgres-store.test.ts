import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { newJobParams } from '../../../src/store/inserts.js';
import {
  exec,
  inTransaction,
  MIGRATION_LOCK_KEY,
  many,
  migratePostgres,
  one,
  openPostgresStore,
  pgMigrations,
  type Queryable,
  types,
  updateRow,
  write,
} from '../../../src/store/postgres/postgres-store.js';
import { MissingParameterError } from '../../../src/store/queries.js';
import { parseId, parseJob } from '../../../src/store/rows.js';
import { waitFor } from '../../helpers/http.js';
import {
  dropFreshSchema,
  freshSchemaUrl,
  type PgStore,
  postgresAvailable,
  shownUrl,
  TEST_DATABASE_URL,
  twoStoresOnFreshSchema,
} from '../../helpers/postgres.js';
import { clusterContract, sharedClusterContract } from '../cluster-contract.js';
import { retentionContract } from '../retention-contract.js';
import { createRun, followUp, newJob, post, storeContract, T0 } from '../store-contract.js';
import { usesContract } from '../uses-contract.js';

const server = await postgresAvailable();

/** Every schema this file made, dropped once it is done. */
const schemas: string[] = [];
const schemaUrl = async () => {
  const url = await freshSchemaUrl();
  schemas.push(url);
  return url;
};
afterAll(async () => {
  await dropFreshSchema(...schemas.splice(0));
});

if (server.ok) {
  storeContract('PostgreSQL', async () => openPostgresStore(await schemaUrl(), { max: 4 }));
  retentionContract('PostgreSQL', async () => openPostgresStore(await schemaUrl(), { max: 4 }));
  clusterContract('PostgreSQL', async () => openPostgresStore(await schemaUrl(), { max: 4 }));
  sharedClusterContract('PostgreSQL', async () => openPostgresStore(await schemaUrl(), { max: 4 }));
  {
    // Two pools on one database: two instances of the bot.
    let url = '';
    usesContract(
      'PostgreSQL (two pools: two instances)',
      async () => {
        url = await schemaUrl();
        return openPostgresStore(url, { max: 4 });
      },
      () => openPostgresStore(url, { max: 4 }),
    );
  }

  describe('PostgreSQL connections', () => {
    it('survive a connection failing while idle (a restart or fail-over of the server)', async () => {
      const failures: Error[] = [];
      const store = await openPostgresStore(await schemaUrl(), {
        max: 2,
        onIdleError: (error) => failures.push(error),
      });
      // What pg-pool does when an idle client's connection ends: without a listener, this throws.
      expect(() =>
        store.pool.emit('error', new Error('terminating connection due to administrator command')),
      ).not.toThrow();
      expect(failures.map((e) => e.message)).toEqual(['terminating connection due to administrator command']);
      expect(await store.getJob(1)).toBeUndefined();
      await store.close();
    });
  });
} else {
  // Said loudly: these tests did not run, and why.
  console.warn(
    `PostgreSQL store tests NOT RUN: no server at ${shownUrl()} (${server.why}). ` +
      'Start PostgreSQL or set TEST_DATABASE_URL; .ci/run starts it.',
  );
}

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

const YEAR = 365 * 24 * 3_600_000;
/** The server's clock, in epoch ms, as the store's statements read it. */
const SERVER_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

describe.runIf(server.ok)('PostgreSQL cluster, timed by the database’s clock', () => {
  let store: PgStore;
  let other: PgStore;
  twoStoresOnFreshSchema(3, (a, b) => {
    store = a;
    other = b;
  });
  const serverNow = async () => Number((await store.pool.query(`SELECT ${SERVER_NOW} AS at`)).rows[0].at);
  /** An instance on record that was last heard from `agoMs` ago by the server's clock. */
  const heardFrom = (id: string, agoMs: number) =>
    store.pool.query(
      `INSERT INTO instances (id, started_at, heartbeat_at) VALUES ($1, ${SERVER_NOW} - $2, ${SERVER_NOW} - $2)`,
      [id, agoMs],
    );
  /** An active job due since `T0`. */
  const dueJob = async (triggerKey: string, channelId = 'C0DOCS') => {
    const { job } = await store.insertJob(newJob(triggerKey, { channelId }), createRun(), T0);
    await store.apply({ jobId: job.id, job: { phase: 'active', nextPollAt: T0 } }, T0);
    return job;
  };

  beforeEach(async () => {
    await store.pool.query('TRUNCATE jobs, runs, outbox, instances RESTART IDENTITY CASCADE');
    // This process's clock a year ahead: nothing below may depend on it.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + YEAR);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('records a heartbeat at the server’s time, not this process’s', async () => {
    const before = await serverNow();
    const at = await store.heartbeat('i-1');
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(await serverNow());
    expect(at).toBeLessThan(Date.now() - YEAR / 2);
    expect(await store.liveInstances(60_000)).toBe(1);
    await heardFrom('i-quiet', 120_000);
    expect(await store.liveInstances(60_000)).toBe(1);
  });

  it('holds a poll claim for its lease by the server’s clock, whatever due time a claimer sends', async () => {
    const job = await dueJob('claimed');
    const before = await serverNow();
    const [claimed] = await store.claimDueJobs('i-1', T0, 10, 60_000);
    expect(claimed?.id).toBe(job.id);
    expect(claimed?.claimedUntil).toBeGreaterThanOrEqual(before + 60_000);
    expect(claimed?.claimedUntil).toBeLessThanOrEqual((await serverNow()) + 60_000);
    // A claimer whose clock runs far ahead cannot take it early.
    expect(await other.claimDueJobs('i-2', Date.now() + 10 * YEAR, 10, 60_000)).toEqual([]);
    // A lease already run out by the server's clock is free at once.
    await store.releaseJob(job.id, 'i-1');
    await store.claimDueJobs('i-1', T0, 10, -1);
    expect((await other.claimDueJobs('i-2', T0, 10, 60_000)).map((j) => j.claimedBy)).toEqual(['i-2']);
  });

  it('takes over only work whose owner the server has not heard from and that no claim still covers', async () => {
    await heardFrom('i-gone', 10_000);
    await store.heartbeat('i-live');
    const { job: orphan } = await store.insertJob(newJob('orphan', { owner: 'i-gone' }), createRun(), T0);
    const { job: held } = await store.insertJob(newJob('held', { owner: 'i-gone' }), createRun(), T0);
    await store.insertJob(newJob('alive', { owner: 'i-live' }), createRun(), T0);
    // Claimed by the gone instance until a minute from now, by the server's clock.
    expect(await store.renewClaim('i-gone', { jobId: held.id }, 60_000)).toBe(true);

    const taken = await other.takeOverOrphans('i-new', 5_000);
    expect(taken.jobs.map((j) => [j.id, j.owner])).toEqual([[orphan.id, 'i-new']]);
    const { rows } = await store.pool.query('SELECT id FROM instances ORDER BY id');
    expect(rows.map((r) => r.id)).toEqual(['i-live']);
    // Once its claim has run out, that job is taken over too.
    await store.pool.query(`UPDATE jobs SET owner_until = ${SERVER_NOW} - 1 WHERE id = $1`, [held.id]);
    expect((await other.takeOverOrphans('i-new', 5_000)).jobs.map((j) => j.id)).toEqual([held.id]);
  });

  it('gives each orphan to one of two instances taking over at the same time', async () => {
    await heardFrom('i-gone', 10_000);
    const orphans: number[] = [];
    for (let i = 0; i < 6; i++)
      orphans.push((await store.insertJob(newJob(`o-${i}`, { owner: 'i-gone' }), createRun(), T0)).job.id);
    await store.heartbeat('i-a');
    await other.heartbeat('i-b');
    const [a, b] = await Promise.all([
      store.takeOverOrphans('i-a', 5_000),
      other.takeOverOrphans('i-b', 5_000),
    ]);
    const ids = [...a.jobs, ...b.jobs].map((j) => j.id).sort((x, y) => x - y);
    expect(ids).toEqual(orphans);
  });

  it('never gives one due job to two instances claiming at the same time', async () => {
    for (let i = 0; i < 6; i++) await dueJob(`due-${i}`, `C0CHAN${i % 2}`);
    const [a, b] = await Promise.all([
      store.claimDueJobs('i-a', T0, 4, 60_000),
      other.claimDueJobs('i-b', T0, 4, 60_000),
    ]);
    // A claimer skips the rows the other is taking rather than wait for them: none is taken twice.
    const ids = [...a, ...b].map((j) => j.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThanOrEqual(4);
    const rest = await other.claimDueJobs('i-b', T0, 10, 60_000);
    expect([...ids, ...rest.map((j) => j.id)].sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

/** The last version before the unused number 11. */
const BEFORE_GAP = 10;

describe.runIf(server.ok)('PostgreSQL migrations', () => {
  const pools: pg.Pool[] = [];
  const urls: string[] = [];
  /** A pool on a fresh schema of its own (or on `url`'s). */
  const poolOn = async (url?: string) => {
    const at = url ?? (await freshSchemaUrl());
    if (!url) urls.push(at);
    const pool = new pg.Pool({ connectionString: at, max: 2, types });
    pools.push(pool);
    return { pool, url: at };
  };
  const applied = async (pool: pg.Pool) =>
    (
      await pool.query(
        'SELECT version, applied_at, xmin::text::bigint AS tx FROM schema_migrations ORDER BY version',
      )
    ).rows as { version: number; applied_at: number; tx: number }[];
  /** Builds the schema as it was at `version` by hand, as a release of then left it. */
  const leftAt = async (pool: pg.Pool, version: number) => {
    await pool.query(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)',
    );
    for (const m of pgMigrations.filter((m) => m.version <= version)) {
      await pool.query(m.sql);
      await pool.query('INSERT INTO schema_migrations VALUES ($1, $2)', [m.version, T0]);
    }
  };

  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.end()));
    for (const url of urls.splice(0)) await dropFreshSchema(url);
  });

  it('apply every migration once, in order, when several instances start at the same time; again, nothing', async () => {
    const { url } = await poolOn();
    const instances = await Promise.all([1, 2, 3].map(() => poolOn(url)));
    await Promise.all(instances.map(({ pool }) => migratePostgres(pool)));
    const pool = instances[0]?.pool as pg.Pool;
    const rows = await applied(pool);
    expect(rows.map((r) => r.version)).toEqual(pgMigrations.map((m) => m.version));
    // Each in its own transaction, committed after the one before it.
    for (let i = 1; i < rows.length; i++) expect(rows[i]?.tx).toBeGreaterThan(rows[i - 1]?.tx ?? 0);
    await migratePostgres(pool);
    expect(await applied(pool)).toEqual(rows);
  });

  it('leave nothing of a failed migration, then bring a schema left before the unused number up to the last', async () => {
    const { pool, url } = await poolOn();
    await leftAt(pool, BEFORE_GAP);
    // In the way of version 12's table, after its first statement has run.
    await pool.query('CREATE TABLE feedback_votes (x INTEGER)');
    await expect(migratePostgres(pool)).rejects.toThrow(/"feedback_votes" already exists/);
    expect(Math.max(...(await applied(pool)).map((r) => r.version))).toBe(BEFORE_GAP);
    const column = await pool.query(
      "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'jobs' AND column_name = 'stopped_run'",
    );
    expect(column.rows).toEqual([]);

    await pool.query('DROP TABLE feedback_votes');
    // The migration lock was let go: another instance is not kept waiting.
    const { pool: next } = await poolOn(url);
    await migratePostgres(next);
    const rows = await applied(next);
    expect(rows.map((r) => r.version)).toEqual(pgMigrations.map((m) => m.version));
    // Only what was missing ran now.
    expect(rows.filter((r) => r.applied_at !== T0).map((r) => r.version)).toEqual(
      pgMigrations.filter((m) => m.version > BEFORE_GAP).map((m) => m.version),
    );
    expect((await next.query('SELECT COUNT(*) AS n FROM feedback_votes')).rows).toEqual([{ n: 0 }]);
    // Jobs watched before the refused polls were counted apart start from none.
    const refusals = await next.query(
      "SELECT data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'jobs' AND column_name = 'poll_refusals'",
    );
    expect(refusals.rows).toEqual([{ data_type: 'integer', is_nullable: 'NO', column_default: '0' }]);
  });

  it('fail, rather than end the process, when the connection migrating ends (a restart of the server)', async () => {
    const { url } = await poolOn();
    const name = `migrate-${Math.random().toString(36).slice(2)}`;
    const named = new URL(url);
    named.searchParams.set('application_name', name);
    const { pool } = await poolOn(named.toString());
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      // Another instance migrating: this one waits for the lock, on a connection of its own.
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      const migrating = migratePostgres(pool).then(
        () => undefined,
        (error: Error) => error,
      );
      const waiting =
        "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'";
      const { pid } = await waitFor(
        'the migration waiting',
        async () => (await holder.query(waiting, [name])).rows[0],
      );
      await holder.query('SELECT pg_terminate_backend($1)', [pid]);
      expect((await migrating)?.message).toMatch(/terminating connection/);
    } finally {
      await holder.end();
    }
    // The next start migrates as usual.
    await migratePostgres(pool);
    expect((await applied(pool)).map((r) => r.version)).toEqual(pgMigrations.map((m) => m.version));
  });

  it('read BIGINT times and counts as numbers, and leave other types as pg reads them', async () => {
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1, types });
    pools.push(pool);
    const { rows } = await pool.query(
      `SELECT ${T0}::bigint AS at, COUNT(*) AS n, 1.5::numeric AS ratio, '{"a":1}'::jsonb AS payload FROM (SELECT 1) one`,
    );
    expect(rows).toEqual([{ at: T0, n: 1, ratio: '1.5', payload: { a: 1 } }]);
  });
});

if (!server.ok)
  console.warn(`PostgreSQL migration tests NOT RUN: no server at ${shownUrl()} (${server.why})`);

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
