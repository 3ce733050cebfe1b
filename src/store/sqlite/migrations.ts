import { migrationsFor } from '../schema.js';

/** The schema migrations, in SQLite's column types. */
export const migrations = migrationsFor('sqlite');
