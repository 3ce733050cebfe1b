import type { Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import { openPostgresStore } from './postgres/postgres-store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './types.js';

/** PostgreSQL when `DATABASE_URL` is set, the embedded SQLite file otherwise. Migrations applied. */
export async function openStore(
  config: Pick<Config, 'databasePath' | 'databaseUrl'>,
  logger?: Logger,
): Promise<Store> {
  return config.databaseUrl
    ? openPostgresStore(config.databaseUrl, {
        onIdleError: (error) =>
          logger?.warn('a database connection failed while idle; the pool replaces it', { error }),
      })
    : openSqliteStore(config.databasePath);
}
