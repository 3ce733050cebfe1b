import pg from 'pg';
import { type DatabaseTlsError, parseDatabaseTls } from '../../config/database-tls.js';
import { storeAreas } from '../areas.js';
import type { Engine } from '../statements.js';
import { runAwaited } from '../statements.js';
import type { Store } from '../types.js';
import { tlsOptions } from './connection-tls.js';
import { migratePostgres, types } from './migrate.js';
import { inTransaction, statementsOn } from './statements.js';

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

  const engine: Engine = {
    ...statementsOn(pool),
    shared: true,
    // Each transaction on a connection of its own, every statement awaited there in turn.
    transaction: (operation) => inTransaction(pool, (client) => runAwaited(operation, statementsOn(client))),
  };
  const store = storeAreas(engine);
  return {
    ...store,
    pool,
    async insertJob(job, firstRun, now) {
      try {
        return await store.insertJob(job, firstRun, now);
      } catch (error) {
        // Two starts raced in one thread on two connections and the unique thread index refused
        // this one: once more, and it returns the job the other start recorded.
        if ((error as { constraint?: string }).constraint === 'jobs_thread')
          return store.insertJob(job, firstRun, now);
        throw error;
      }
    },
    // PostgreSQL checkpoints on its own, in its own processes: nothing here waits for one.
    checkpoint: async () => undefined,
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
