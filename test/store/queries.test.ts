import { describe, expect, it } from 'vitest';
import {
  MissingParameterError,
  POSTGRES_ONLY,
  queriesFor,
  toPostgres,
  updateStatement,
} from '../../src/store/queries.js';

const sqlite = queriesFor('sqlite');
const postgres = queriesFor('postgres');

describe('the statements in each engine’s dialect', () => {
  it('are the same statements for both engines, with no placeholder left', () => {
    expect(Object.keys(postgres).sort()).toEqual(Object.keys(sqlite).sort());
    for (const [name, sql] of [...Object.entries(sqlite), ...Object.entries(postgres)])
      expect(sql, name).not.toMatch(/\{\{|\}\}/);
  });

  it('lock on PostgreSQL what concurrent claimers skip, and nothing on SQLite', () => {
    expect(postgres.claimDueJobs).toContain('FOR UPDATE SKIP LOCKED');
    expect(postgres.jobState).toMatch(/FOR UPDATE$/);
    expect(postgres.lockedRun).toMatch(/FOR UPDATE$/);
    for (const [name, sql] of Object.entries(sqlite)) expect(sql, name).not.toContain('FOR UPDATE');
  });

  it('time ownership by the server’s clock on PostgreSQL and by the :clock parameter on SQLite', () => {
    expect(postgres.heartbeat).toContain('clock_timestamp()');
    expect(postgres.heartbeat).not.toContain(':clock');
    expect(sqlite.heartbeat).toContain(':clock');
    expect(sqlite.heartbeat).not.toContain('clock_timestamp');
    // Every use is replaced, not just the first.
    expect(postgres.claimDueJobs.match(/clock_timestamp\(\)/g)?.length).toBeGreaterThan(1);
    for (const [name, sql] of Object.entries(postgres)) expect(sql, name).not.toContain(':clock');
    // A due time the caller sends stays the caller's: it decides when, not who.
    expect(postgres.dueJobs).toContain(':now');
  });

  it('name the PostgreSQL-only statements apart from the shared ones', () => {
    for (const name of Object.keys(POSTGRES_ONLY)) {
      expect(name).toMatch(/Postgres$/);
      expect(Object.keys(sqlite)).not.toContain(name);
    }
  });
});

describe('a patch as an UPDATE', () => {
  it('sets each defined key’s snake_case column from its own parameter', () => {
    expect(updateStatement('jobs', 5, { phase: 'idle', nextPollAt: null, lastError: undefined })).toEqual({
      sql: 'UPDATE jobs SET phase = :phase, next_poll_at = :nextPollAt WHERE id = :id',
      params: { phase: 'idle', nextPollAt: null, id: 5 },
    });
  });

  it('is nothing at all when no key is defined', () => {
    expect(updateStatement('runs', 5, {})).toBeUndefined();
    expect(updateStatement('runs', 5, { state: undefined })).toBeUndefined();
  });

  it('with a claimant, changes the row only while the claim is still that instance’s', () => {
    expect(updateStatement('outbox', 9, { attempts: 2 }, 'i-1')).toEqual({
      sql: 'UPDATE outbox SET attempts = :attempts WHERE id = :id AND claimed_by = :claimant',
      params: { attempts: 2, id: 9, claimant: 'i-1' },
    });
  });

  it('keeps values out of the statement’s text', () => {
    const hostile = "x'; DROP TABLE jobs; --";
    const update = updateStatement('jobs', 1, { lastError: hostile });
    expect(update?.sql).not.toContain(hostile);
    expect(update?.params.lastError).toBe(hostile);
  });
});

describe('named parameters on PostgreSQL', () => {
  it('numbers each name once, in order of first use, with its value', () => {
    expect(
      toPostgres(
        'UPDATE runs SET sent_at = :now, reserved_at = COALESCE(reserved_at, :now) WHERE id = :runId',
        {
          runId: 7,
          now: 1_000,
        },
      ),
    ).toEqual({
      text: 'UPDATE runs SET sent_at = $1, reserved_at = COALESCE(reserved_at, $1) WHERE id = $2',
      values: [1_000, 7],
    });
  });

  it('passes null through, and ignores values the statement does not name', () => {
    expect(toPostgres('SELECT :a AS a', { a: null, b: 2 })).toEqual({
      text: 'SELECT $1 AS a',
      values: [null],
    });
  });

  it('leaves casts and statements without parameters alone', () => {
    expect(toPostgres('SELECT id::text FROM jobs WHERE id = :id', { id: 1 }).text).toBe(
      'SELECT id::text FROM jobs WHERE id = $1',
    );
    expect(toPostgres('SELECT 1', {})).toEqual({ text: 'SELECT 1', values: [] });
  });

  it('refuses a statement whose parameter was not given', () => {
    expect(() => toPostgres('SELECT * FROM jobs WHERE id = :jobId', { id: 1 })).toThrow(
      MissingParameterError,
    );
  });
});
