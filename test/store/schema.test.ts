import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { AT_REST } from '../../src/domain/phases.js';
import { TABLE_COLUMNS } from '../../src/store/rows.js';
import { type Dialect, migrationsFor } from '../../src/store/schema.js';

const DIALECTS: Dialect[] = ['sqlite', 'postgres'];

describe('the schema migrations', () => {
  it('are numbered from 1 upwards, each number once (a number may be skipped)', () => {
    const versions = migrationsFor('sqlite').map((m) => m.version);
    expect(versions[0]).toBe(1);
    for (let i = 1; i < versions.length; i++) expect(versions[i]).toBeGreaterThan(versions[i - 1] ?? 0);
    // The one gap on record: 11 was never shipped.
    expect(versions).not.toContain(11);
    expect(versions).toContain(12);
    expect(versions).toContain(13);
    expect(versions).toContain(14);
    expect(versions).toContain(15);
  });

  it('leave the tables read whole with exactly the columns their row parsers name', () => {
    // The parsers pass over a column they do not know (a later release's); this holds them to
    // this release's schema instead, so a column added without its parser still fails here.
    const db = new Database(':memory:');
    for (const m of migrationsFor('sqlite')) db.exec(m.sql);
    const camel = (name: string) => name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
    for (const [table, columns] of Object.entries(TABLE_COLUMNS)) {
      const inSchema = (db.pragma(`table_info(${table})`) as { name: string }[]).map((c) => camel(c.name));
      expect(inSchema.sort(), table).toEqual([...columns].sort());
    }
    db.close();
  });

  it('are the same migrations, in the same order, for both engines', () => {
    const shape = (d: Dialect) => migrationsFor(d).map((m) => [m.version, m.name]);
    expect(shape('postgres')).toEqual(shape('sqlite'));
    for (const m of migrationsFor('sqlite')) expect(m.name.trim()).not.toBe('');
  });

  it('have every column type filled in for the engine', () => {
    for (const dialect of DIALECTS) {
      for (const m of migrationsFor(dialect))
        expect(m.sql, `${dialect} ${m.version}`).not.toMatch(/\{\{|\}\}/);
    }
    const first = (d: Dialect) => migrationsFor(d)[0]?.sql ?? '';
    expect(first('sqlite')).toMatch(/id INTEGER PRIMARY KEY,/);
    expect(first('sqlite')).toMatch(/created_at INTEGER NOT NULL/);
    expect(first('sqlite')).toMatch(/payload TEXT NOT NULL/);
    expect(first('postgres')).toMatch(/id SERIAL PRIMARY KEY,/);
    expect(first('postgres')).toMatch(/created_at BIGINT NOT NULL/);
    expect(first('postgres')).toMatch(/payload JSONB NOT NULL/);
  });

  it('rebuild the finished jobs’ index with every finished phase', () => {
    const v7 = migrationsFor('sqlite').find((m) => m.version === 7)?.sql ?? '';
    for (const phase of AT_REST) expect(v7).toContain(`'${phase}'`);
  });

  it('build a working SQLite database when applied one after another', () => {
    const db = new Database(':memory:');
    try {
      for (const m of migrationsFor('sqlite')) db.exec(m.sql);
      const columns = (table: string) =>
        (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
      // A column from each of the later migrations.
      expect(columns('jobs')).toEqual(
        expect.arrayContaining([
          'owner_until',
          'privacy',
          'context_channel_id',
          'stopped_run',
          'erased_at',
          'poll_refusals',
        ]),
      );
      expect(columns('runs')).toEqual(
        expect.arrayContaining(['team_id', 'reserved_at', 'owner_until', 'run_key']),
      );
      expect(columns('feedback_votes')).toEqual([
        'job_id',
        'run_seq',
        'user_id',
        'value',
        'updated_at',
        'reason',
      ]);
    } finally {
      db.close();
    }
  });

  it('hand each caller its own copies', () => {
    const [mine, theirs] = [migrationsFor('sqlite'), migrationsFor('sqlite')];
    expect(mine).not.toBe(theirs);
    expect(mine[0]).not.toBe(theirs[0]);
    expect(mine).toEqual(theirs);
  });
});
