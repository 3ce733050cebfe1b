import type { Config } from '../config.js';
import { openPostgresStore } from './postgres/postgres-store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './types.js';

/** PostgreSQL when `DATABASE_URL` is set, the embedded SQLite file otherwise. Migrations applied. */
export async function openStore(config: Pick<Config, 'databasePath' | 'databaseUrl'>): Promise<Store> {
  return config.databaseUrl ? openPostgresStore(config.databaseUrl) : openSqliteStore(config.databasePath);
}
