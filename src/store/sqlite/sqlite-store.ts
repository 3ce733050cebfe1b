import Database from 'better-sqlite3';
import { assistantThreadMethods } from '../assistant-threads.js';
import { changeHolds, readsJob } from '../changes.js';
import { clusterMethods } from '../cluster-store.js';
import { feedbackMethods } from '../feedback.js';
import { homeViewMethods } from '../home-views.js';
import { jobMethods } from '../jobs.js';
import { outboxMethods } from '../outbox.js';
import type { Params } from '../queries/named.js';
import { type PatchedTable, type QueryName, queriesFor, updateStatement } from '../queries.js';
import { RehearsalUndone, undone } from '../rehearsal.js';
import {
  parseCountedUses,
  parseFigures,
  parseId,
  parseJobState,
  parseProjectUses,
  parseRun,
  parseUseOfRun,
  type Row,
} from '../rows.js';
import { runMethods } from '../runs.js';
import type { Statements } from '../statements.js';
import type {
  Change,
  Erased,
  NewJob,
  NewOutboxItem,
  NewRun,
  Store,
  UseQuota,
  UseReservation,
} from '../types.js';
import { UnknownRunError, useDecision, useReadMethods, usesPerProject } from '../uses.js';
import { sqliteCluster } from './cluster.js';
import { migrate, preparePrivateFile } from './database-file.js';
import { withGroupedInserts } from './group-commit.js';
import { sqliteInserts } from './insert-job.js';

export { migrate, STORE_DIRECTORY_MODE, STORE_FILE_MODE } from './database-file.js';

/**
 * Opens (creating if needed) the SQLite store at `path` (`:memory:` for tests), in WAL mode,
 * with migrations applied. The file and the folders created for it are private to the app's user.
 */
export function openSqliteStore(
  path: string,
  options: {
    /** The store's clock, which heartbeats, claims and holds are timed by (epoch ms). */
    now?: () => number;
  } = {},
): Store & { db: Database.Database } {
  const clock = options.now ?? Date.now;
  const db = openDatabase(path);
  const statements = statementsOf(db, clock);
  const { one, many, write, update: updateRow } = statements;

  const enqueueAll = (items: NewOutboxItem[], now: number) => {
    for (const item of items) {
      write('enqueue', {
        jobId: item.jobId,
        dedupeKey: item.dedupeKey,
        kind: item.payload.type,
        payload: JSON.stringify(item.payload),
        now,
      });
    }
  };

  const { insertRun, insertJob } = sqliteInserts({ one, write, enqueueAll });
  const insertJobTx = db.transaction(insertJob);
  const rehearseTx = db.transaction((job: NewJob, firstRun: NewRun, now: number) => {
    insertJob(job, firstRun, now);
    throw new RehearsalUndone();
  });

  const applyOne = (change: Change, now: number): boolean => {
    const state = readsJob(change) ? one('jobState', { jobId: change.jobId }, parseJobState) : undefined;
    const run = change.expectRun ? one('lockedRun', { runId: change.expectRun.id }, parseRun) : undefined;
    const owners = (change.owner?.runIds ?? []).map((runId) => one('lockedRun', { runId }, parseRun)?.owner);
    if (!changeHolds(change, state, run, owners)) return false;
    updateRow('jobs', change.jobId, { ...change.job, updatedAt: now });
    if (change.incrementRunCount) write('incrementRunCount', { jobId: change.jobId });
    for (const run of [...(change.run ? [change.run] : []), ...(change.runs ?? [])]) {
      updateRow('runs', run.id, run.patch);
    }
    if (change.enqueue) enqueueAll(change.enqueue, now);
    return true;
  };
  const applyTx = db.transaction(applyOne);
  const applyAllTx = db.transaction((changes: Change[], now: number) => changes.map((c) => applyOne(c, now)));

  // One snapshot: both reads see the same moment.
  const figuresTx = db.transaction((since: number, timeoutMs: number) => {
    const counts = one('figures', { timeoutMs }, parseFigures);
    if (!counts) throw new Error('the figures query returned no row');
    return { ...counts, uses: usesPerProject(many('instructionsSince', { since }, parseProjectUses)) };
  });

  const reserveTx = db.transaction((runId: number, quota: UseQuota, now: number): UseReservation => {
    // BEGIN IMMEDIATE: the database's one writer, so reservations are serialised, also across
    // connections to the same file.
    const { defaultProject } = quota;
    const run = one('useOfRun', { runId, defaultProject }, parseUseOfRun);
    if (!run) throw new UnknownRunError(runId);
    if (run.reservedAt !== null) return { reserved: true };
    const since = now - quota.windowMs;
    const user = one('recentInstructions', { userId: run.authorId, since }, parseCountedUses);
    const project = one('projectUses', { since, defaultProject, project: run.project }, parseCountedUses);
    const none = { n: 0, oldest: null };
    const decision = useDecision(quota, user ?? none, project ?? none, now);
    if (decision.reserved) write('reserveRun', { runId, now });
    return decision;
  });
  const eraseTx = db.transaction(
    (before: number, erasedInstruction: string, now: number, limit: number): Erased => {
      const expired = many('expiredJobs', { before, limit }, parseId);
      for (const { id: jobId } of expired) {
        write('eraseJob', { jobId, before, erasedInstruction, now });
        write('eraseRuns', { jobId, before });
      }
      return {
        jobs: expired.length,
        outboxItems: write('deleteDoneOutbox', { before, limit }),
        homeViews: write('deleteOldHomeViews', { before }),
        assistantThreads: write('deleteOldAssistantThreads', { before }),
      };
    },
  );
  return withGroupedInserts(db, {
    db,
    shared: false,
    ...sqliteCluster({ db, many, write }),
    async insertJob(job, firstRun, now) {
      return insertJobTx.immediate(job, firstRun, now);
    },
    rehearseInsert: (job, firstRun, now) => undone(() => rehearseTx.immediate(job, firstRun, now)),
    async checkpoint() {
      db.pragma('wal_checkpoint(PASSIVE)');
    },
    async insertFollowUp(jobId, run, now) {
      return db.transaction(() => insertRun(jobId, run, now)).immediate();
    },
    async apply(change, now) {
      return applyTx.immediate(change, now);
    },
    async applyAll(changes, now) {
      return applyAllTx.immediate(changes, now);
    },
    ...clusterMethods(statements),
    ...jobMethods(statements),
    ...runMethods(statements),
    ...outboxMethods(statements),
    ...useReadMethods(statements),
    ...homeViewMethods(statements),
    ...assistantThreadMethods(statements),
    ...feedbackMethods(statements),
    async enqueue(items, now) {
      db.transaction(() => enqueueAll(items, now)).immediate();
    },
    figures: async (since, timeoutMs) => figuresTx(since, timeoutMs),
    async reserveUse(runId, quota, now) {
      return reserveTx.immediate(runId, quota, now);
    },
    async eraseExpired(before, erasedInstruction, now, limit) {
      return eraseTx.immediate(before, erasedInstruction, now, limit);
    },
    async close() {
      if (db.open) db.close();
    },
  });
}

/** The database file, private to its owner, in WAL mode and migrated. */
function openDatabase(path: string): Database.Database {
  if (path !== ':memory:') preparePrivateFile(path);
  const db = new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    // NORMAL is durable against process crashes in WAL mode; only a power loss can lose the tail.
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    migrate(db);
    return db;
  } catch (error) {
    db.close();
    // SQLite's own words ("file is not a database") do not say which file.
    throw new Error(`the SQLite store at ${path} cannot be opened: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** Reads and writes by query name, each statement prepared once and given the store's clock. */
function statementsOf(db: Database.Database, clock: () => number) {
  // better-sqlite3 binds the statements' `:name` parameters from an object as they are written.
  const statements = Object.fromEntries(
    Object.entries(queriesFor('sqlite')).map(([name, sql]) => [name, db.prepare(sql)]),
  ) as Record<QueryName, Database.Statement>;
  // Every statement gets the store's clock as `:clock` (the statements' `{{now}}`); those that do
  // not name it ignore it. A caller's own `clock` wins (see the take-over in `cluster.ts`).
  const timed = (params: Params): Params => ({ clock: clock(), ...params });
  const one = <T>(name: QueryName, params: Params, parse: (row: Row) => T): T | undefined => {
    const row = statements[name].get(timed(params)) as Row | undefined;
    return row === undefined ? undefined : parse(row);
  };
  const many = <T>(name: QueryName, params: Params, parse: (row: Row) => T): T[] =>
    (statements[name].all(timed(params)) as Row[]).map(parse);
  const write = (name: QueryName, params: Params): number => statements[name].run(timed(params)).changes;
  // Patches touch a handful of column sets over and over: prepare each statement once.
  const updates = new Map<string, Database.Statement>();
  const update = (table: PatchedTable, id: number, patch: Record<string, unknown>, claimant?: string) => {
    const built = updateStatement(table, id, patch, claimant);
    if (!built) return 0;
    let statement = updates.get(built.sql);
    if (!statement) {
      statement = db.prepare(built.sql);
      updates.set(built.sql, statement);
    }
    return statement.run(built.params).changes;
  };
  return { one, many, write, update } satisfies Statements;
}
