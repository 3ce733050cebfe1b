import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { newJobArgs, type QueryName, queriesFor, sqliteArgs } from '../queries.js';
import { fromRow, outboxFromRow, patchColumns, type Row } from '../rows.js';
import type {
  Change,
  Erased,
  JobPatch,
  JobRecord,
  NewJob,
  NewOutboxItem,
  NewRun,
  Orphans,
  OutboxPatch,
  RunPatch,
  RunRecord,
  Store,
  StoreFigures,
  UseQuota,
  UseReservation,
} from '../types.js';
import { type CountedUses, UnknownRunError, useDecision } from '../uses.js';
import { migrations } from './migrations.js';

/** `SET a = @a, b = @b` for the defined keys of a patch, with snake_case columns. */
function setClause(patch: Record<string, unknown>): { sql: string; params: Row } {
  const columns = patchColumns(patch);
  return {
    sql: columns.map(([column], i) => `${column} = @p${i}`).join(', '),
    params: Object.fromEntries(columns.map(([, value], i) => [`p${i}`, value])),
  };
}

const queries = queriesFor('sqlite');

/** Due, unclaimed active jobs ($1 now, $2 limit); served by the partial index `jobs_due`. */
export const DUE_JOBS_SQL = queries.dueJobs;
/** Due, unclaimed outbox items ($1 now, $2 limit), each job's thread posts in order. */
export const DUE_OUTBOX_SQL = queries.dueOutbox;
/** Claims due outbox items ($1 instance, $2 now, $3 limit, $4 claimed until). */
export const CLAIM_OUTBOX_SQL = queries.claimOutbox;
/** Claims due jobs for polling ($1 instance, $2 now, $3 limit, $4 claimed until). */
export const CLAIM_JOBS_SQL = queries.claimDueJobs;

/** Applies the numbered migrations that the database has not seen yet. */
export function migrate(db: Database.Database): void {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
  );
  const applied = new Set(
    db
      .prepare('SELECT version FROM schema_migrations')
      .all()
      .map((r) => (r as { version: number }).version),
  );
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
        migration.version,
        Date.now(),
      );
    }).immediate();
  }
}

/** Mode of folders created for the store: only the app's user may list or enter them. */
export const STORE_DIRECTORY_MODE = 0o700;
/** Mode of the database file and its `-wal` and `-shm` companions: only the app's user may read them. */
export const STORE_FILE_MODE = 0o600;

/**
 * Makes the database file private before SQLite opens it, whatever the umask: folders created
 * for it get 0700 (an existing folder, which may be the working directory, is left alone), and
 * the file, created here if missing, gets 0600, as do companions left by an earlier run. SQLite
 * creates `-wal` and `-shm` with the database file's mode.
 */
function preparePrivateFile(path: string): void {
  const file = resolve(path);
  const dir = dirname(file);
  const first = mkdirSync(dir, { recursive: true, mode: STORE_DIRECTORY_MODE });
  if (first) {
    for (let at = dir; ; at = dirname(at)) {
      chmodSync(at, STORE_DIRECTORY_MODE);
      if (at === first || dirname(at) === at) break;
    }
  }
  closeSync(openSync(file, 'a', STORE_FILE_MODE));
  for (const companion of [file, `${file}-wal`, `${file}-shm`]) {
    if (existsSync(companion)) chmodSync(companion, STORE_FILE_MODE);
  }
}

/**
 * Opens (creating if needed) the SQLite store at `path` (`:memory:` for tests), in WAL mode,
 * with migrations applied. The file and the folders created for it are private to the app's user.
 */
export function openSqliteStore(path: string): Store & { db: Database.Database } {
  if (path !== ':memory:') preparePrivateFile(path);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  // NORMAL is durable against process crashes in WAL mode; only a power loss can lose the tail.
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);

  const stmt = {
    jobByTrigger: db.prepare('SELECT * FROM jobs WHERE trigger_key = ?'),
    jobById: db.prepare('SELECT * FROM jobs WHERE id = ?'),
    jobState: db.prepare('SELECT phase, run_count FROM jobs WHERE id = ?'),
    nextSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 AS seq FROM runs WHERE job_id = ?'),
    insertRun: db.prepare(`
      INSERT INTO runs (job_id, seq, kind, prompt, author_id, message_ts, state, owner, team_id, created_at)
      VALUES (@jobId, @seq, @kind, @prompt, @authorId, @messageTs, 'pending', @owner, @teamId, @now)`),
    runByMessage: db.prepare('SELECT * FROM runs WHERE job_id = ? AND message_ts = ?'),
    claimRun: db.prepare(
      "UPDATE runs SET state = 'sending', sent_at = @now, reserved_at = COALESCE(reserved_at, @now) WHERE id = @id AND state = 'pending'",
    ),
    runById: db.prepare('SELECT * FROM runs WHERE id = ?'),
    runsOfJob: db.prepare('SELECT * FROM runs WHERE job_id = ? ORDER BY seq'),
    pendingRuns: db.prepare(
      "SELECT * FROM runs WHERE state = 'pending' AND job_id = ? AND kind = 'follow_up' ORDER BY seq",
    ),
    incrementRunCount: db.prepare('UPDATE jobs SET run_count = run_count + 1 WHERE id = ?'),
    transitionJob: db.prepare('UPDATE jobs SET phase = ?, updated_at = ? WHERE id = ? AND phase = ?'),
    enqueue: db.prepare(`
      INSERT INTO outbox (job_id, dedupe_key, kind, payload, next_attempt_at, created_at)
      VALUES (@jobId, @dedupeKey, @kind, @payload, @now, @now)
      ON CONFLICT (dedupe_key) DO NOTHING`),
    countActive: db.prepare("SELECT COUNT(*) AS n FROM jobs WHERE phase = 'active'"),
  };

  const shared = Object.fromEntries(
    Object.entries(queries).map(([name, sql]) => [name, db.prepare(sql)]),
  ) as Record<QueryName, Database.Statement>;

  const enqueueAll = (items: NewOutboxItem[], now: number) => {
    for (const item of items) {
      stmt.enqueue.run({
        jobId: item.jobId,
        dedupeKey: item.dedupeKey,
        kind: item.payload.type,
        payload: JSON.stringify(item.payload),
        now,
      });
    }
  };

  // Patches touch a handful of column sets over and over: prepare each statement once.
  const updates = new Map<string, Database.Statement>();
  const updateRow = (table: string, id: number, patch: Record<string, unknown>) => {
    const { sql, params } = setClause(patch);
    if (!sql) return;
    const text = `UPDATE ${table} SET ${sql} WHERE id = @id`;
    let statement = updates.get(text);
    if (!statement) {
      statement = db.prepare(text);
      updates.set(text, statement);
    }
    statement.run({ ...params, id });
  };

  const insertRun = (jobId: number, run: NewRun, now: number): { run: RunRecord; created: boolean } => {
    if (run.messageTs) {
      const existing = stmt.runByMessage.get(jobId, run.messageTs) as Row | undefined;
      if (existing) return { run: fromRow<RunRecord>(existing), created: false };
    }
    const { seq } = stmt.nextSeq.get(jobId) as { seq: number };
    const info = stmt.insertRun.run({
      ...run,
      owner: run.owner ?? null,
      teamId: run.teamId ?? null,
      jobId,
      seq,
      now,
    });
    const row = stmt.runById.get(info.lastInsertRowid) as Row;
    return { run: fromRow<RunRecord>(row), created: true };
  };

  const insertJobTx = db.transaction((job: NewJob, firstRun: NewRun, now: number) => {
    // A thread holds one job: a second start in it returns the job already there.
    let inThread = job.threadTs
      ? (shared.jobByThread.get(sqliteArgs([job.channelId, job.threadTs])) as Row | undefined)
      : undefined;
    if (inThread && shared.detachThread.run(sqliteArgs([inThread.id, job.triggerKey])).changes === 1)
      inThread = undefined;
    const info = inThread ? { changes: 0 } : shared.insertJob.run(sqliteArgs(newJobArgs(job, now)));
    const row = inThread ?? (stmt.jobByTrigger.get(job.triggerKey) as Row);
    const record = fromRow<JobRecord>(row);
    if (info.changes === 0) {
      const runs = (stmt.runsOfJob.all(record.id) as Row[]).map((r) => fromRow<RunRecord>(r));
      return { job: record, run: runs[0] as RunRecord, created: false };
    }
    const { run } = insertRun(record.id, firstRun, now);
    return { job: record, run, created: true };
  });

  const applyOne = (change: Change, now: number): boolean => {
    if (change.expect) {
      const row = stmt.jobState.get(change.jobId) as { phase: string; run_count: number } | undefined;
      if (row?.phase !== change.expect.phase || row.run_count !== change.expect.runCount) return false;
    }
    const jobPatch: JobPatch & { updatedAt: number } = { ...change.job, updatedAt: now };
    updateRow('jobs', change.jobId, jobPatch);
    if (change.incrementRunCount) {
      stmt.incrementRunCount.run(change.jobId);
    }
    for (const run of [...(change.run ? [change.run] : []), ...(change.runs ?? [])]) {
      updateRow('runs', run.id, run.patch as RunPatch);
    }
    if (change.enqueue) enqueueAll(change.enqueue, now);
    return true;
  };
  const applyTx = db.transaction(applyOne);
  const applyAllTx = db.transaction((changes: Change[], now: number) => changes.map((c) => applyOne(c, now)));

  const rows = <T>(name: QueryName, ...args: unknown[]) =>
    (shared[name].all(sqliteArgs(args)) as Row[]).map((r) => fromRow<T>(r));
  const byId = <T extends { id: number }>(records: T[]) => records.sort((a, b) => a.id - b.id);

  // One snapshot: both reads see the same moment.
  const figuresTx = db.transaction((usesSince: number, liveSince: number): StoreFigures => {
    const counts = fromRow<Omit<StoreFigures, 'uses'>>(shared.figures.get(sqliteArgs([liveSince])) as Row);
    const uses = rows<{ projectId: string | null; n: number }>('instructionsSince', usesSince);
    return { ...counts, uses: uses.map((r) => ({ projectId: r.projectId, count: Number(r.n) })) };
  });

  const adoptTx = db.transaction((instanceId: string, staleBefore: number): Orphans => {
    const args = sqliteArgs([instanceId, staleBefore]);
    shared.releaseDeadJobClaims.run(args);
    shared.releaseDeadOutboxClaims.run(args);
    const jobs = byId(rows<JobRecord>('adoptJobs', instanceId, staleBefore));
    const runs = byId(rows<RunRecord>('adoptRuns', instanceId, staleBefore));
    shared.forgetDeadInstances.run(args);
    return { jobs, runs };
  });
  const reserveTx = db.transaction((runId: number, quota: UseQuota, now: number): UseReservation => {
    // BEGIN IMMEDIATE: the database's one writer, so reservations are serialised, also across
    // connections to the same file.
    const run = shared.useOfRun.get(sqliteArgs([runId, quota.defaultProject])) as
      | { author_id: string; reserved_at: number | null; project: string }
      | undefined;
    if (!run) throw new UnknownRunError(runId);
    if (run.reserved_at !== null) return { reserved: true };
    const since = now - quota.windowMs;
    const user = shared.recentInstructions.get(sqliteArgs([run.author_id, since])) as CountedUses;
    const project = shared.projectUses.get(
      sqliteArgs([since, quota.defaultProject, run.project]),
    ) as CountedUses;
    const decision = useDecision(quota, user, project, now);
    if (decision.reserved) shared.reserveRun.run(sqliteArgs([runId, now]));
    return decision;
  });
  const eraseTx = db.transaction(
    (before: number, erasedInstruction: string, now: number, limit: number): Erased => {
      const expired = rows<{ id: number }>('expiredJobs', before, limit);
      for (const { id } of expired) {
        shared.eraseJob.run(sqliteArgs([id, before, erasedInstruction, now]));
        shared.eraseRuns.run(sqliteArgs([id, before]));
      }
      return {
        jobs: expired.length,
        outboxItems: shared.deleteDoneOutbox.run(sqliteArgs([before, limit])).changes,
        homeViews: shared.deleteOldHomeViews.run(sqliteArgs([before])).changes,
      };
    },
  );
  const releaseWorkTx = db.transaction((instanceId: string, work: { jobIds: number[]; runIds: number[] }) => {
    for (const id of work.jobIds) shared.releaseJobWork.run(sqliteArgs([id, instanceId]));
    for (const id of work.runIds) shared.releaseRunWork.run(sqliteArgs([id, instanceId]));
  });
  const retireTx = db.transaction((instanceId: string) => {
    const args = sqliteArgs([instanceId]);
    shared.retireInstance.run(args);
    shared.releaseJobsOf.run(args);
    shared.releaseOutboxOf.run(args);
  });

  return {
    db,
    shared: false,
    async insertJob(job, firstRun, now) {
      return insertJobTx.immediate(job, firstRun, now);
    },
    async insertFollowUp(jobId, run, now) {
      return db.transaction(() => insertRun(jobId, run, now)).immediate();
    },
    async claimRun(runId, now) {
      return stmt.claimRun.run({ now, id: runId }).changes === 1;
    },
    async transitionJob(jobId, from, to, now) {
      return stmt.transitionJob.run(to, now, jobId, from).changes === 1;
    },
    async getRun(id) {
      const row = stmt.runById.get(id) as Row | undefined;
      return row ? fromRow<RunRecord>(row) : undefined;
    },
    async getJob(id) {
      const row = stmt.jobById.get(id) as Row | undefined;
      return row ? fromRow<JobRecord>(row) : undefined;
    },
    async findJobByThread(channelId, threadTs) {
      const row = shared.jobByThread.get(sqliteArgs([channelId, threadTs])) as Row | undefined;
      return row ? fromRow<JobRecord>(row) : undefined;
    },
    async getRuns(jobId) {
      return (stmt.runsOfJob.all(jobId) as Row[]).map((r) => fromRow<RunRecord>(r));
    },
    async apply(change, now) {
      return applyTx.immediate(change, now);
    },
    async applyAll(changes, now) {
      return applyAllTx.immediate(changes, now);
    },
    async dueJobs(now, limit) {
      return rows<JobRecord>('dueJobs', now, limit);
    },
    async claimDueJobs(instanceId, now, limit, until) {
      const claimed = rows<JobRecord>('claimDueJobs', instanceId, now, limit, until);
      return claimed.sort((a, b) => (a.nextPollAt ?? 0) - (b.nextPollAt ?? 0) || a.id - b.id);
    },
    async nextDueAt(now) {
      const row = shared.nextDueAt.get(sqliteArgs([now])) as { at: number | null };
      return row.at ?? undefined;
    },
    async releaseJob(jobId, instanceId) {
      shared.releaseJob.run(sqliteArgs([jobId, instanceId]));
    },
    async heartbeat(instanceId, now) {
      shared.heartbeat.run(sqliteArgs([instanceId, now]));
    },
    async liveInstances(since) {
      return Number((shared.liveInstances.get(sqliteArgs([since])) as { n: number }).n);
    },
    async retireInstance(instanceId) {
      retireTx.immediate(instanceId);
    },
    async adoptOrphans(instanceId, staleBefore) {
      return adoptTx.immediate(instanceId, staleBefore);
    },
    async releaseWork(instanceId, work) {
      releaseWorkTx.immediate(instanceId, work);
    },
    async pendingRuns(jobId) {
      return (stmt.pendingRuns.all(jobId) as Row[]).map((r) => fromRow<RunRecord>(r));
    },
    async readyRuns(jobId) {
      return rows<RunRecord>('readyRuns', jobId);
    },
    async claimReadyRuns(jobId, instanceId, now) {
      return db
        .transaction(() => rows<RunRecord>('claimReadyRuns', jobId, now, instanceId))
        .immediate()
        .sort((a, b) => a.seq - b.seq);
    },
    async recentJobs(filter, limit) {
      return 'requesterId' in filter
        ? rows<JobRecord>('recentJobsOfRequester', filter.requesterId, limit)
        : rows<JobRecord>('recentJobsOfChannel', filter.channelId, limit);
    },
    async instructionsSince(since) {
      return rows<{ projectId: string | null; n: number }>('instructionsSince', since).map((r) => ({
        projectId: r.projectId,
        count: Number(r.n),
      }));
    },
    async setRootReaction(jobId, name) {
      shared.setRootReaction.run(sqliteArgs([jobId, name]));
    },
    async latestCardUpdate(jobId) {
      const row = shared.latestCardUpdate.get(sqliteArgs([jobId])) as { id: number | null };
      return row.id ?? undefined;
    },
    async supersedeCardUpdates(jobId, uptoId, instanceId, now) {
      shared.supersedeCardUpdates.run(sqliteArgs([jobId, uptoId, instanceId, now]));
    },
    async recordHomeOpened(userId, teamId, now) {
      shared.recordHomeOpened.run(sqliteArgs([userId, teamId, now]));
    },
    async homeOpened(userId) {
      return shared.homeOpened.get(sqliteArgs([userId])) !== undefined;
    },
    async enqueue(items, now) {
      db.transaction(() => enqueueAll(items, now)).immediate();
    },
    async dueOutbox(now, limit) {
      return (shared.dueOutbox.all(sqliteArgs([now, limit])) as Row[]).map(outboxFromRow);
    },
    async claimOutbox(instanceId, now, limit, until) {
      const claimed = shared.claimOutbox.all(sqliteArgs([instanceId, now, limit, until])) as Row[];
      return claimed.map(outboxFromRow).sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.id - b.id);
    },
    async updateOutbox(id, patch: OutboxPatch) {
      updateRow('outbox', id, patch);
    },
    async nextOutboxAt() {
      const row = shared.nextOutboxAt.get() as { at: number | null };
      return row.at ?? undefined;
    },
    async countActiveJobs() {
      return (stmt.countActive.get() as { n: number }).n;
    },
    async figures(usesSince, liveSince) {
      return figuresTx(usesSince, liveSince);
    },
    async recentInstructions(userId, since) {
      const row = shared.recentInstructions.get(sqliteArgs([userId, since])) as CountedUses;
      return { count: row.n, oldest: row.oldest };
    },
    async reserveUse(runId, quota, now) {
      return reserveTx.immediate(runId, quota, now);
    },
    async eraseExpired(before, erasedInstruction, now, limit) {
      return eraseTx.immediate(before, erasedInstruction, now, limit);
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
