import { migrationsFor } from '../schema.js';

/** The schema migrations, in PostgreSQL's column types. */
export const pgMigrations = migrationsFor('postgres');
