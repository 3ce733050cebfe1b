import { describe, expect, it } from 'vitest';
import { MissingParameterError, toPostgres } from '../../../src/store/queries/named.js';

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
