import Database from 'better-sqlite3';
import { config as loadDotEnv } from 'dotenv';
import { openPostgresStore } from '../store/postgres/postgres-store.js';

/**
 * `npm run migrate-store`: copies the SQLite store at DATABASE_PATH into the PostgreSQL database
 * at DATABASE_URL, keeping every id, so threads, runs and undelivered messages carry over. Run it
 * with the bot stopped. Refuses to copy into a database that already holds jobs.
 */
const TABLES = ['jobs', 'runs', 'outbox'] as const;

export async function migrateStore(sqlitePath: string, databaseUrl: string): Promise<Record<string, number>> {
  const source = new Database(sqlitePath, { readonly: true, fileMustExist: true });
  const target = await openPostgresStore(databaseUrl, { max: 1 });
  const client = await target.pool.connect();
  const copied: Record<string, number> = {};
  try {
    const { rows } = await client.query('SELECT COUNT(*) AS n FROM jobs');
    if (Number(rows[0]?.n) > 0)
      throw new Error('the PostgreSQL database already holds jobs; nothing was copied');
    await client.query('BEGIN');
    for (const table of TABLES) {
      const rows = source.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[];
      for (const row of rows) {
        const columns = Object.keys(row);
        const values = columns.map((c) => row[c]);
        const placeholders = columns.map((_c, i) => `$${i + 1}`).join(', ');
        await client.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${placeholders})`, values);
      }
      copied[table] = rows.length;
      // Later inserts continue after the copied ids.
      await client.query(
        `SELECT setval(pg_get_serial_sequence('${table}', 'id'), GREATEST((SELECT MAX(id) FROM ${table}), 1))`,
      );
    }
    await client.query('COMMIT');
    return copied;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
    source.close();
    await target.close();
  }
}

if (process.argv[1]?.endsWith('migrate-store.js')) {
  loadDotEnv({ quiet: true });
  const databaseUrl = process.env.DATABASE_URL?.trim();
  const databasePath = process.env.DATABASE_PATH?.trim() || './data/docs-agent.sqlite';
  if (!databaseUrl) {
    process.stderr.write(
      'migrate-store needs DATABASE_URL (the PostgreSQL target) and DATABASE_PATH (the SQLite source)\n',
    );
    process.exit(1);
  }
  migrateStore(databasePath, databaseUrl).then(
    (copied) => process.stdout.write(`copied ${JSON.stringify(copied)} from ${databasePath} to PostgreSQL\n`),
    (error: unknown) => {
      process.stderr.write(`migrate-store failed: ${(error as Error).message}\n`);
      process.exit(1);
    },
  );
}
