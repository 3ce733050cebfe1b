import pg from 'pg';
import { type DatabaseTlsError, parseDatabaseTls } from '../../config/database-tls.js';
import { assistantThreadMethods } from '../assistant-threads.js';
import { changeHolds } from '../changes.js';
import { clusterMethods } from '../cluster-store.js';
import { feedbackMethods } from '../feedback.js';
import { homeViewMethods } from '../home-views.js';
import { jobMethods } from '../jobs.js';
import { outboxMethods } from '../outbox.js';
import {
  parseCountedUses,
  parseFigures,
  parseId,
  parseJobState,
  parseReservation,
  parseRun,
  parseUseOfRun,
} from '../rows.js';
import { runMethods } from '../runs.js';
import type { Change, Store } from '../types.js';
import { UnknownRunError, useDecision, useReadMethods } from '../uses.js';
import { postgresCluster } from './cluster.js';
import { tlsOptions } from './connection-tls.js';
import { postgresInserts } from './insert-job.js';
import { migratePostgres, PROJECT_USES_LOCK, types, USER_USES_LOCK } from './migrate.js';
import {
  exec,
  inTransaction,
  many,
  one,
  poolStatements,
  type Queryable,
  updateRow,
  write,
} from './statements.js';

export { migratePostgres } from './migrate.js';

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
  const pool = openPool(url, options.max);
  pool.on('error', (error) => options.onIdleError?.(error));
  await migratePostgres(pool);

  const statements = poolStatements(pool);
  const useReads = useReadMethods(statements);
  const transaction = <T>(work: (db: pg.PoolClient) => Promise<T>) => inTransaction(pool, work);

  const enqueueAll = async (db: Queryable, items: Parameters<Store['enqueue']>[0], now: number) => {
    for (const item of items) {
      const { jobId, dedupeKey, payload } = item;
      await write(db, 'enqueue', {
        jobId,
        dedupeKey,
        kind: payload.type,
        payload: JSON.stringify(payload),
        now,
      });
    }
  };

  /** One change inside a transaction; false (nothing written) when `expect` did not hold. */
  async function applyIn(db: Queryable, change: Change, now: number): Promise<boolean> {
    // Read (and locked) even without `expect`, so changes to one job apply one at a time.
    const current = await one(db, 'jobState', { jobId: change.jobId }, parseJobState);
    const run = change.expectRun && (await one(db, 'lockedRun', { runId: change.expectRun.id }, parseRun));
    const owners: (string | null | undefined)[] = [];
    for (const runId of change.owner?.runIds ?? [])
      owners.push((await one(db, 'lockedRun', { runId }, parseRun))?.owner);
    if (!changeHolds(change, current, run || undefined, owners)) return false;
    await updateRow(db, 'jobs', change.jobId, { ...change.job, updatedAt: now });
    if (change.incrementRunCount) await write(db, 'incrementRunCount', { jobId: change.jobId });
    for (const run of [...(change.run ? [change.run] : []), ...(change.runs ?? [])]) {
      await updateRow(db, 'runs', run.id, run.patch);
    }
    if (change.enqueue) await enqueueAll(db, change.enqueue, now);
    return true;
  }

  const { insertRun, insertJobOnce, rehearseInsert } = postgresInserts(transaction, enqueueAll);

  return {
    pool,
    shared: true,
    ...postgresCluster(pool, transaction),
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
    rehearseInsert,
    // PostgreSQL checkpoints on its own, in its own processes: nothing here waits for one.
    checkpoint: async () => undefined,
    insertFollowUp: (jobId, run, now) => transaction((db) => insertRun(db, jobId, run, now)),
    apply: (change, now) => transaction((db) => applyIn(db, change, now)),
    applyAll: (changes, now) =>
      transaction(async (db) => {
        const results: boolean[] = [];
        for (const change of changes) results.push(await applyIn(db, change, now));
        return results;
      }),
    ...clusterMethods(statements),
    ...jobMethods(statements),
    ...runMethods(statements),
    ...outboxMethods(statements),
    ...useReads,
    ...homeViewMethods(statements),
    ...assistantThreadMethods(statements),
    ...feedbackMethods(statements),
    enqueue: (items, now) => transaction((db) => enqueueAll(db, items, now)),
    async figures(since, timeoutMs) {
      // Two reads side by side: figures for a dashboard, where a moment between them is harmless.
      const [counts, uses] = await Promise.all([
        one(pool, 'figures', { timeoutMs }, parseFigures),
        useReads.instructionsSince(since),
      ]);
      if (!counts) throw new Error('the figures query returned no row');
      return { ...counts, uses };
    },
    reserveUse: (runId, quota, now) =>
      transaction(async (db) => {
        const { defaultProject } = quota;
        const run = await one(db, 'useOfRun', { runId, defaultProject }, parseUseOfRun);
        if (!run) throw new UnknownRunError(runId);
        await exec(db, 'usesLockPostgres', { lock: USER_USES_LOCK, id: run.authorId });
        await exec(db, 'usesLockPostgres', { lock: PROJECT_USES_LOCK, id: run.project });
        const current = await one(db, 'runReservationPostgres', { runId }, parseReservation);
        if (current && current.reservedAt !== null) return { reserved: true as const };
        const since = now - quota.windowMs;
        const none = { n: 0, oldest: null };
        const user = await one(db, 'recentInstructions', { userId: run.authorId, since }, parseCountedUses);
        const project = await one(
          db,
          'projectUses',
          { since, defaultProject, project: run.project },
          parseCountedUses,
        );
        const decision = useDecision(quota, user ?? none, project ?? none, now);
        if (decision.reserved) await write(db, 'reserveRun', { runId, now });
        return decision;
      }),
    eraseExpired: (before, erasedInstruction, now, limit) =>
      transaction(async (db) => {
        const expired = await many(db, 'expiredJobs', { before, limit }, parseId);
        for (const { id: jobId } of expired) {
          await write(db, 'eraseJob', { jobId, before, erasedInstruction, now });
          await write(db, 'eraseRuns', { jobId, before });
        }
        const outboxItems = await write(db, 'deleteDoneOutbox', { before, limit });
        const homeViews = await write(db, 'deleteOldHomeViews', { before });
        const assistantThreads = await write(db, 'deleteOldAssistantThreads', { before });
        return { jobs: expired.length, outboxItems, homeViews, assistantThreads };
      }),
    async close() {
      await pool.end();
    },
  };
}

/** The connection pool, its TLS always explicit. */
function openPool(url: string, max: number | undefined): pg.Pool {
  const tls = parseDatabaseTls(url);
  return new pg.Pool({
    connectionString: tls.connectionString,
    max: max ?? 10,
    types,
    // Always explicit, so neither pg's reading of the URL nor PGSSLMODE can weaken it.
    ssl: tlsOptions(tls),
    ...(tls.negotiation ? ({ sslnegotiation: tls.negotiation } as pg.PoolConfig) : {}),
  });
}
