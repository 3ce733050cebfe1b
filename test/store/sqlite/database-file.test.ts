import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, migrations, preparePrivateFile } from '../../../src/store/sqlite/database-file.js';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { storeFileEachTest } from '../../helpers/sqlite-file.js';
import { createRun, newJob, T0 } from '../store-contract.js';

/** Permission bits of a file or folder. */
const mode = (at: string) => statSync(at).mode & 0o777;
const migrationRows = (db: Database.Database) =>
  db.prepare('SELECT version, applied_at FROM schema_migrations ORDER BY version').all() as Array<{
    version: number;
    applied_at: number;
  }>;

describe('the SQLite database file', () => {
  const file = storeFileEachTest();
  const { open } = file;

  it('creates missing directories and opens the database in WAL mode', async () => {
    expect(existsSync(join(file.dir, 'nested'))).toBe(false);
    const store = open();
    expect(existsSync(file.path)).toBe(true);
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(store.db.pragma('busy_timeout', { simple: true })).toBe(5000);
    // NORMAL
    expect(store.db.pragma('synchronous', { simple: true })).toBe(1);
  });

  it('keeps the store private to the app’s user whatever the umask: folders it creates 0700, the file, -wal and -shm 0600', async () => {
    const previous = process.umask(0o022);
    try {
      const store = open();
      await store.insertJob(newJob('private'), createRun(), T0);
      expect(mode(join(file.dir, 'nested'))).toBe(0o700);
      expect(mode(join(file.dir, 'nested', 'deeper'))).toBe(0o700);
      expect(mode(file.path)).toBe(0o600);
      expect(mode(`${file.path}-wal`)).toBe(0o600);
      expect(mode(`${file.path}-shm`)).toBe(0o600);
    } finally {
      process.umask(previous);
    }
  });

  it('makes an existing store file private, and leaves an existing folder (maybe the working directory) alone', async () => {
    mkdirSync(dirname(file.path), { recursive: true });
    chmodSync(dirname(file.path), 0o755);
    writeFileSync(file.path, '');
    chmodSync(file.path, 0o644);
    const store = open();
    await store.insertJob(newJob('existing'), createRun(), T0);
    expect(mode(file.path)).toBe(0o600);
    expect(mode(`${file.path}-wal`)).toBe(0o600);
    expect(mode(dirname(file.path))).toBe(0o755);
  });

  it('records each migration once and does not re-apply it on reopen', async () => {
    const first = open();
    const applied = migrationRows(first.db);
    expect(applied.map((r) => r.version)).toEqual(migrations.map((m) => m.version));
    expect(applied.length).toBeGreaterThan(0);
    for (const row of applied) expect(typeof row.applied_at).toBe('number');
    await first.insertJob(newJob('survives-migrate'), createRun(), T0);
    await first.close();

    const second = open();
    expect(migrationRows(second.db)).toEqual(applied);
    // Running the migrations again by hand is a no-op too.
    migrate(second.db);
    expect(migrationRows(second.db)).toEqual(applied);
    expect((await second.takeOverOrphans('i-test', Date.now())).jobs.map((j) => j.triggerKey)).toEqual([
      'survives-migrate',
    ]);
    const tables = second.db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all()
      .map((r) => (r as { name: string }).name);
    expect(tables).toEqual([
      'assistant_threads',
      'feedback_votes',
      'home_views',
      'instances',
      'jobs',
      'outbox',
      'pull_requests',
      'runs',
      'schema_migrations',
    ]);
  });

  it('is prepared private before SQLite opens it, without touching what is in it', () => {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, 'kept');
    writeFileSync(`${file.path}-wal`, '');
    chmodSync(file.path, 0o666);
    chmodSync(`${file.path}-wal`, 0o644);
    preparePrivateFile(file.path);
    expect(mode(file.path)).toBe(0o600);
    expect(mode(`${file.path}-wal`)).toBe(0o600);
    expect(existsSync(`${file.path}-shm`)).toBe(false);
    expect(statSync(file.path).size).toBe(4);
  });

  it('names the path when the store cannot be created there', () => {
    const aFile = join(file.dir, 'a-file');
    writeFileSync(aFile, 'not a folder');
    expect(() => openSqliteStore(join(aFile, 'store.sqlite'))).toThrow(aFile);
    // A folder given as the store's file.
    expect(() => openSqliteStore(file.dir)).toThrow(file.dir);
  });
});

/** A store left at version 10 (before the unused number 11), each migration recorded at `T0`. */
function storeAtVersion10(): Database.Database {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  for (const m of migrations.filter((m) => m.version <= 10)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(m.version, T0);
  }
  return db;
}

describe('SQLite migrations', () => {
  it('bring a store left at an earlier version up to the last, across the unused number', () => {
    const db = storeAtVersion10();
    try {
      migrate(db);
      const rows = migrationRows(db);
      expect(rows.map((r) => r.version)).toEqual(migrations.map((m) => m.version));
      // Only what was missing ran now.
      expect(rows.filter((r) => r.applied_at !== T0).map((r) => r.version)).toEqual(
        migrations.filter((m) => m.version > 10).map((m) => m.version),
      );
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'feedback_votes'").get()).toBeDefined();
      // Jobs watched before the refused polls were counted apart start from none.
      const refusals = (db.prepare('PRAGMA table_info(jobs)').all() as { name: string }[]).find(
        (c) => c.name === 'poll_refusals',
      );
      expect(refusals).toMatchObject({ type: 'INTEGER', notnull: 1, dflt_value: '0' });
    } finally {
      db.close();
    }
  });

  it('leave nothing of a migration that fails, and record no version for it', () => {
    const db = storeAtVersion10();
    try {
      // In the way of version 12's table, after its first statement has run.
      db.exec('CREATE TABLE feedback_votes (x INTEGER)');
      expect(() => migrate(db)).toThrow(/feedback_votes already exists/);
      expect(Math.max(...migrationRows(db).map((r) => r.version))).toBe(10);
      const columns = (db.prepare('PRAGMA table_info(jobs)').all() as { name: string }[]).map((c) => c.name);
      expect(columns).not.toContain('stopped_run');
      // Nor did any migration after it run.
      expect(columns).not.toContain('poll_refusals');
    } finally {
      db.close();
    }
  });
});
