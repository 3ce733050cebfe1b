import pg from 'pg';
import { newJobArgs, queriesFor } from '../queries.js';
import { fromRow, outboxFromRow, patchColumns, type Row } from '../rows.js';
import type {
  Change,
  JobRecord,
  NewJob,
  NewRun,
  OutboxItem,
  OutboxPatch,
  RunRecord,
  Store,
  StoreFigures,
} from '../types.js';
import { type CountedUses, UnknownRunError, useDecision } from '../uses.js';
import { type DatabaseTlsError, parseDatabaseTls, tlsOptions } from './connection-tls.js';
import { pgMigrations } from './migrations.js';

/** Advisory lock key held while migrating, so instances starting together migrate once. */
export const MIGRATION_LOCK_KEY = 7_204_118_533;
/** Advisory lock key held while taking over a gone instance's work, so two instances never both do. */
export const ADOPTION_LOCK_KEY = 7_204_118_534;

/**
 * First keys of the two-key advisory locks that serialise use reservations: one lock per person
 * and one per project (the second key hashes the id), always taken in that order.
 */
export const USER_USES_LOCK = 720_411;
export const PROJECT_USES_LOCK = 720_412;

const queries = queriesFor('postgres');

// BIGINT (epoch milliseconds) and COUNT come back as numbers, not strings.
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 20
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

type Queryable = Pick<pg.PoolClient, 'query'>;

/** Applies the numbered migrations not yet applied, under an advisory lock. */
export async function migratePostgres(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)',
    );
    const { rows } = await client.query('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((r) => Number(r.version)));
    for (const migration of pgMigrations) {
      if (applied.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [
          migration.version,
          Date.now(),
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    client.release();
  }
}

/** `UPDATE table SET a = $2, … WHERE id = $1` for the defined keys of a patch. */
async function updateRow(db: Queryable, table: string, id: number, patch: Record<string, unknown>) {
  const columns = patchColumns(patch);
  if (columns.length === 0) return;
  const sets = columns.map(([column], i) => `${column} = $${i + 2}`).join(', ');
  await db.query(`UPDATE ${table} SET ${sets} WHERE id = $1`, [id, ...columns.map(([, v]) => v)]);
}

/**
 * The store on PostgreSQL, for deployments without a persistent disk or with several instances.
 * Same behaviour as the SQLite store (one behaviour suite runs against both). TLS follows the
 * URL's `sslmode` with libpq's meaning ({@link tlsOptions}); an unknown mode or an unreadable
 * certificate file throws {@link DatabaseTlsError} before any connection is made.
 */
export async function openPostgresStore(
  url: string,
  options: {
    max?: number;
    /**
     * Told when an idle connection fails (the server restarted, a fail-over, a dropped
     * connection). The pool replaces it; without a listener the pool's 'error' event would end
     * the process.
     */
    onIdleError?: (error: Error) => void;
  } = {},
): Promise<Store & { pool: pg.Pool }> {
  const tls = parseDatabaseTls(url);
  const pool = new pg.Pool({
    connectionString: tls.connectionString,
    max: options.max ?? 10,
    types,
    // Always explicit, so neither pg's reading of the URL nor PGSSLMODE can weaken it.
    ssl: tlsOptions(tls),
    ...(tls.negotiation ? ({ sslnegotiation: tls.negotiation } as pg.PoolConfig) : {}),
  });
  pool.on('error', (error) => options.onIdleError?.(error));
  await migratePostgres(pool);

  const one = async <T>(db: Queryable, sql: string, params: unknown[]): Promise<T | undefined> => {
    const { rows } = await db.query(sql, params);
    return rows[0] ? fromRow<T>(rows[0] as Row) : undefined;
  };
  const many = async <T>(sql: string, params: unknown[]): Promise<T[]> =>
    (await pool.query(sql, params)).rows.map((r) => fromRow<T>(r as Row));

  async function transaction<T>(work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A connection that cannot even roll back is discarded, not handed to the next caller.
      await client.query('ROLLBACK').catch((rollback: Error) => {
        broken = rollback;
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async function insertRun(db: Queryable, jobId: number, run: NewRun, now: number) {
    // Serializes run numbering per job.
    await db.query('SELECT id FROM jobs WHERE id = $1 FOR UPDATE', [jobId]);
    if (run.messageTs) {
      const existing = await one<RunRecord>(db, 'SELECT * FROM runs WHERE job_id = $1 AND message_ts = $2', [
        jobId,
        run.messageTs,
      ]);
      if (existing) return { run: existing, created: false };
    }
    const inserted = await one<RunRecord>(
      db,
      `INSERT INTO runs (job_id, seq, kind, prompt, author_id, message_ts, state, owner, team_id, created_at)
       VALUES ($1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM runs WHERE job_id = $1), $2, $3, $4, $5, 'pending', $7, $8, $6)
       RETURNING *`,
      [jobId, run.kind, run.prompt, run.authorId, run.messageTs, now, run.owner ?? null, run.teamId ?? null],
    );
    return { run: inserted as RunRecord, created: true };
  }

  const enqueueAll = async (db: Queryable, items: Parameters<Store['enqueue']>[0], now: number) => {
    for (const item of items) {
      await db.query(
        `INSERT INTO outbox (job_id, dedupe_key, kind, payload, next_attempt_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (dedupe_key) DO NOTHING`,
        [item.jobId, item.dedupeKey, item.payload.type, JSON.stringify(item.payload), now],
      );
    }
  };

  const byId = <T extends { id: number }>(records: T[]) => records.sort((a, b) => a.id - b.id);
  const byDue = (items: OutboxItem[]) =>
    items.sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.id - b.id);

  /** One change inside a transaction; false (nothing written) when `expect` did not hold. */
  async function applyIn(db: Queryable, change: Change, now: number): Promise<boolean> {
    const current = await one<{ phase: string; runCount: number }>(
      db,
      'SELECT phase, run_count FROM jobs WHERE id = $1 FOR UPDATE',
      [change.jobId],
    );
    if (
      change.expect &&
      (current?.phase !== change.expect.phase || current.runCount !== change.expect.runCount)
    ) {
      return false;
    }
    await updateRow(db, 'jobs', change.jobId, { ...change.job, updatedAt: now });
    if (change.incrementRunCount)
      await db.query('UPDATE jobs SET run_count = run_count + 1 WHERE id = $1', [change.jobId]);
    for (const run of [...(change.run ? [change.run] : []), ...(change.runs ?? [])]) {
      await updateRow(db, 'runs', run.id, run.patch);
    }
    if (change.enqueue) await enqueueAll(db, change.enqueue, now);
    return true;
  }

  const insertJobOnce = (job: NewJob, firstRun: NewRun, now: number) =>
    transaction(async (db) => {
      // A thread holds one job: a second start in it returns the job already there.
      let inThread = job.threadTs
        ? await one<JobRecord>(db, queries.jobByThread, [job.channelId, job.threadTs])
        : undefined;
      if (inThread && (await db.query(queries.detachThread, [inThread.id, job.triggerKey])).rowCount === 1)
        inThread = undefined;
      const inserted = inThread
        ? undefined
        : await one<JobRecord>(db, `${queries.insertJob} RETURNING *`, newJobArgs(job, now));
      if (!inserted) {
        const existing =
          inThread ??
          ((await one<JobRecord>(db, 'SELECT * FROM jobs WHERE trigger_key = $1', [
            job.triggerKey,
          ])) as JobRecord);
        const run = (await one<RunRecord>(db, 'SELECT * FROM runs WHERE job_id = $1 ORDER BY seq LIMIT 1', [
          existing.id,
        ])) as RunRecord;
        return { job: existing, run, created: false };
      }
      const { run } = await insertRun(db, inserted.id, firstRun, now);
      return { job: inserted, run, created: true };
    });

  return {
    pool,
    shared: true,
    async insertJob(job, firstRun, now) {
      try {
        return await insertJobOnce(job, firstRun, now);
      } catch (error) {
        // Two starts raced in one thread and the unique thread index refused this one: once
        // more, and it returns the job the other start recorded.
        if ((error as { constraint?: string }).constraint === 'jobs_thread')
          return insertJobOnce(job, firstRun, now);
        throw error;
      }
    },
    insertFollowUp: (jobId, run, now) => transaction((db) => insertRun(db, jobId, run, now)),
    async claimRun(runId, now) {
      const r = await pool.query(
        "UPDATE runs SET state = 'sending', sent_at = $1, reserved_at = COALESCE(reserved_at, $1) WHERE id = $2 AND state = 'pending'",
        [now, runId],
      );
      return r.rowCount === 1;
    },
    async transitionJob(jobId, from, to, now) {
      const r = await pool.query('UPDATE jobs SET phase = $1, updated_at = $2 WHERE id = $3 AND phase = $4', [
        to,
        now,
        jobId,
        from,
      ]);
      return r.rowCount === 1;
    },
    getJob: (id) => one<JobRecord>(pool, 'SELECT * FROM jobs WHERE id = $1', [id]),
    getRun: (id) => one<RunRecord>(pool, 'SELECT * FROM runs WHERE id = $1', [id]),
    findJobByThread: (channelId, threadTs) =>
      one<JobRecord>(pool, queries.jobByThread, [channelId, threadTs]),
    getRuns: (jobId) => many<RunRecord>('SELECT * FROM runs WHERE job_id = $1 ORDER BY seq', [jobId]),
    apply: (change, now) => transaction((db) => applyIn(db, change, now)),
    applyAll: (changes, now) =>
      transaction(async (db) => {
        const results: boolean[] = [];
        for (const change of changes) results.push(await applyIn(db, change, now));
        return results;
      }),
    dueJobs: (now, limit) => many<JobRecord>(queries.dueJobs, [now, limit]),
    async claimDueJobs(instanceId, now, limit, until) {
      const claimed = await many<JobRecord>(queries.claimDueJobs, [instanceId, now, limit, until]);
      return claimed.sort((a, b) => (a.nextPollAt ?? 0) - (b.nextPollAt ?? 0) || a.id - b.id);
    },
    async nextDueAt(now) {
      const { rows } = await pool.query(queries.nextDueAt, [now]);
      return rows[0]?.at ?? undefined;
    },
    async releaseJob(jobId, instanceId) {
      await pool.query(queries.releaseJob, [jobId, instanceId]);
    },
    async heartbeat(instanceId, now) {
      await pool.query(queries.heartbeat, [instanceId, now]);
    },
    async liveInstances(since) {
      return Number((await pool.query(queries.liveInstances, [since])).rows[0]?.n ?? 0);
    },
    retireInstance: (instanceId) =>
      transaction(async (db) => {
        await db.query(queries.retireInstance, [instanceId]);
        await db.query(queries.releaseJobsOf, [instanceId]);
        await db.query(queries.releaseOutboxOf, [instanceId]);
      }),
    adoptOrphans: (instanceId, staleBefore) =>
      transaction(async (db) => {
        // Serialized: each adopter then sees what the one before it took, so no row is taken twice.
        await db.query('SELECT pg_advisory_xact_lock($1)', [ADOPTION_LOCK_KEY]);
        const args = [instanceId, staleBefore];
        await db.query(queries.releaseDeadJobClaims, args);
        await db.query(queries.releaseDeadOutboxClaims, args);
        const jobs = (await db.query(queries.adoptJobs, args)).rows.map((r) => fromRow<JobRecord>(r as Row));
        const runs = (await db.query(queries.adoptRuns, args)).rows.map((r) => fromRow<RunRecord>(r as Row));
        await db.query(queries.forgetDeadInstances, args);
        return { jobs: byId(jobs), runs: byId(runs) };
      }),
    releaseWork: (instanceId, work) =>
      transaction(async (db) => {
        for (const id of work.jobIds) await db.query(queries.releaseJobWork, [id, instanceId]);
        for (const id of work.runIds) await db.query(queries.releaseRunWork, [id, instanceId]);
      }),
    pendingRuns: (jobId) =>
      many<RunRecord>(
        "SELECT * FROM runs WHERE state = 'pending' AND job_id = $1 AND kind = 'follow_up' ORDER BY seq",
        [jobId],
      ),
    readyRuns: (jobId) => many<RunRecord>(queries.readyRuns, [jobId]),
    async claimReadyRuns(jobId, instanceId, now) {
      const claimed = await many<RunRecord>(queries.claimReadyRuns, [jobId, now, instanceId]);
      return claimed.sort((a, b) => a.seq - b.seq);
    },
    recentJobs: (filter, limit) =>
      'requesterId' in filter
        ? many<JobRecord>(queries.recentJobsOfRequester, [filter.requesterId, limit])
        : many<JobRecord>(queries.recentJobsOfChannel, [filter.channelId, limit]),
    async instructionsSince(since) {
      const rows = await many<{ projectId: string | null; n: number }>(queries.instructionsSince, [since]);
      return rows.map((r) => ({ projectId: r.projectId, count: Number(r.n) }));
    },
    async setRootReaction(jobId, name) {
      await pool.query(queries.setRootReaction, [jobId, name]);
    },
    async latestCardUpdate(jobId) {
      const { rows } = await pool.query(queries.latestCardUpdate, [jobId]);
      return rows[0]?.id ?? undefined;
    },
    async supersedeCardUpdates(jobId, uptoId, instanceId, now) {
      await pool.query(queries.supersedeCardUpdates, [jobId, uptoId, instanceId, now]);
    },
    async recordHomeOpened(userId, teamId, now) {
      await pool.query(queries.recordHomeOpened, [userId, teamId, now]);
    },
    async homeOpened(userId) {
      return (await pool.query(queries.homeOpened, [userId])).rows.length > 0;
    },
    enqueue: (items, now) => transaction((db) => enqueueAll(db, items, now)),
    async dueOutbox(now, limit) {
      const { rows } = await pool.query(queries.dueOutbox, [now, limit]);
      return rows.map((r) => outboxFromRow(r as Row));
    },
    async claimOutbox(instanceId, now, limit, until) {
      const { rows } = await pool.query(queries.claimOutbox, [instanceId, now, limit, until]);
      return byDue(rows.map((r) => outboxFromRow(r as Row)));
    },
    async updateOutbox(id, patch: OutboxPatch) {
      await updateRow(pool, 'outbox', id, patch);
    },
    async nextOutboxAt() {
      const { rows } = await pool.query(queries.nextOutboxAt);
      return rows[0]?.at ?? undefined;
    },
    async countActiveJobs() {
      const { rows } = await pool.query("SELECT COUNT(*) AS n FROM jobs WHERE phase = 'active'");
      return Number(rows[0]?.n ?? 0);
    },
    async figures(usesSince, liveSince) {
      // Two reads side by side: figures for a dashboard, where a moment between them is harmless.
      const [counts, uses] = await Promise.all([
        one<Omit<StoreFigures, 'uses'>>(pool, queries.figures, [liveSince]),
        many<{ projectId: string | null; n: number }>(queries.instructionsSince, [usesSince]),
      ]);
      if (!counts) throw new Error('the figures query returned no row');
      return { ...counts, uses: uses.map((r) => ({ projectId: r.projectId, count: Number(r.n) })) };
    },
    async recentInstructions(userId, since) {
      const { rows } = await pool.query(queries.recentInstructions, [userId, since]);
      return { count: Number(rows[0]?.n ?? 0), oldest: rows[0]?.oldest ?? null };
    },
    reserveUse: (runId, quota, now) =>
      transaction(async (db) => {
        const run = await one<{ authorId: string; project: string }>(db, queries.useOfRun, [
          runId,
          quota.defaultProject,
        ]);
        if (!run) throw new UnknownRunError(runId);
        // Held until commit: the next reservation for this person or project (on any instance)
        // waits, and its counts, read after that, include this one.
        await db.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [USER_USES_LOCK, run.authorId]);
        await db.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [PROJECT_USES_LOCK, run.project]);
        const current = await one<{ reservedAt: number | null }>(
          db,
          'SELECT reserved_at FROM runs WHERE id = $1 FOR UPDATE',
          [runId],
        );
        if (current && current.reservedAt !== null) return { reserved: true as const };
        const since = now - quota.windowMs;
        const counts = async (sql: string, params: unknown[]): Promise<CountedUses> => {
          const row = (await db.query(sql, params)).rows[0] as { n?: unknown; oldest?: unknown } | undefined;
          return { n: Number(row?.n ?? 0), oldest: row?.oldest == null ? null : Number(row.oldest) };
        };
        const user = await counts(queries.recentInstructions, [run.authorId, since]);
        const project = await counts(queries.projectUses, [since, quota.defaultProject, run.project]);
        const decision = useDecision(quota, user, project, now);
        if (decision.reserved) await db.query(queries.reserveRun, [runId, now]);
        return decision;
      }),
    eraseExpired: (before, erasedInstruction, now, limit) =>
      transaction(async (db) => {
        const expired = (await db.query(queries.expiredJobs, [before, limit])).rows as { id: number }[];
        for (const { id } of expired) {
          await db.query(queries.eraseJob, [id, before, erasedInstruction, now]);
          await db.query(queries.eraseRuns, [id, before]);
        }
        const outbox = await db.query(queries.deleteDoneOutbox, [before, limit]);
        const homes = await db.query(queries.deleteOldHomeViews, [before]);
        return { jobs: expired.length, outboxItems: outbox.rowCount ?? 0, homeViews: homes.rowCount ?? 0 };
      }),
    async close() {
      await pool.end();
    },
  };
}
