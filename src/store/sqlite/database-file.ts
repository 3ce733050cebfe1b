import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { migrationsFor } from '../schema.js';

/** The schema migrations, in SQLite's column types. */
export const migrations = migrationsFor('sqlite');

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
export function preparePrivateFile(path: string): void {
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
