import pg from 'pg';
import { migrationsFor } from '../schema.js';

/** The schema migrations, in PostgreSQL's column types. */
export const pgMigrations = migrationsFor('postgres');

/** Advisory lock key held while migrating, so instances starting together migrate once. */
export const MIGRATION_LOCK_KEY = 7_204_118_533;

// BIGINT (epoch milliseconds) and COUNT come back as numbers, not strings.
export const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 20
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** Applies the numbered migrations not yet applied, under an advisory lock. */
export async function migratePostgres(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  // A connection that ends while migrating (a restart of the server) says so through the query
  // and as an 'error' event, which the pool listens for only on idle connections: unheard, the
  // event would end the process instead of failing the start. The connection is then discarded.
  let broken: Error | undefined;
  const ended = (error: Error) => {
    broken = error;
  };
  client.on('error', ended);
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
        // On a lost connection the rollback fails too; the migration's own error is the one to tell.
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    client.removeListener('error', ended);
    client.release(broken);
  }
}
