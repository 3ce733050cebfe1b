import { config as loadDotEnv } from 'dotenv';
import { openStore } from '../store/lifecycle.js';

/**
 * The Procfile's `release:` step: applies the store's migrations and exits, so a deploy fails
 * before any instance serves traffic on an unmigrated database.
 */
loadDotEnv({ quiet: true });
const databaseUrl = process.env.DATABASE_URL?.trim() || undefined;
const databasePath = process.env.DATABASE_PATH?.trim() || './data/docs-agent.sqlite';
try {
  const store = await openStore({ databaseUrl, databasePath });
  await store.close();
  process.stdout.write(`migrations applied (${databaseUrl ? 'PostgreSQL' : `SQLite at ${databasePath}`})\n`);
} catch (error) {
  process.stderr.write(`migrations failed: ${(error as Error).message}\n`);
  process.exit(1);
}
