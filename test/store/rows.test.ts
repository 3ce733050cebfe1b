import { describe, expect, it } from 'vitest';
import { parseOutboxItem, parseRun, parseRunNumber, RowShapeError } from '../../src/store/rows.js';

const runRow = {
  id: 1,
  job_id: 2,
  seq: 1,
  kind: 'create',
  prompt: 'Document the flow',
  author_id: 'U0ALICE',
  run_key: 'first',
  message_ts: null,
  state: 'pending',
  error: null,
  outcome: null,
  owner: null,
  owner_until: null,
  team_id: null,
  created_at: 1_700_000_000_000,
  reserved_at: null,
  sent_at: null,
  outcome_at: null,
};

describe('row parsers', () => {
  it('give records with camelCase keys', () => {
    expect(parseRun(runRow)).toMatchObject({
      id: 1,
      jobId: 2,
      authorId: 'U0ALICE',
      createdAt: 1_700_000_000_000,
    });
  });

  it('read a run recorded before runs had keys with the key its message gives it', () => {
    const before = { ...runRow, run_key: null };
    expect(parseRun({ ...before, kind: 'follow_up', message_ts: '1700000000.000200' }).runKey).toBe(
      '1700000000.000200',
    );
    expect(parseRun(before).runKey).toBe('first');
    expect(parseRun({ ...runRow, run_key: 'modal:V0FIX' }).runKey).toBe('modal:V0FIX');
  });

  it('refuse a row with a column missing, or of another type', () => {
    const { outcome_at: _dropped, ...missing } = runRow;
    expect(() => parseRun(missing)).toThrow(RowShapeError);
    expect(() => parseRun({ ...runRow, seq: '1' })).toThrow(RowShapeError);
  });

  it('pass over a column a later release added, so an overlapping deploy still reads its rows', () => {
    const later = parseRun({ ...runRow, retried_at: null });
    expect(later).toEqual(parseRun(runRow));
    expect(later).not.toHaveProperty('retriedAt');
  });

  it('still refuse an unknown column in a row that is not a whole table’s', () => {
    expect(() => parseRunNumber({ id: 1, seq: 1, extra: 2 })).toThrow(RowShapeError);
  });

  it('read an outbox payload stored as JSON text or as an object, without the stored kind', () => {
    const row = {
      id: 3,
      job_id: null,
      dedupe_key: null,
      kind: 'reaction',
      attempts: 0,
      next_attempt_at: 1,
      started_at: null,
      delivered_at: null,
      dead_at: null,
      last_error: null,
      claimed_by: null,
      claimed_until: null,
      created_at: 1,
    };
    const payload = { type: 'reaction', channel: 'C0DOCS', ts: '1.2', name: 'eyes' };
    expect(parseOutboxItem({ ...row, payload: JSON.stringify(payload) })).toEqual(
      parseOutboxItem({ ...row, payload }),
    );
    expect(parseOutboxItem({ ...row, payload })).not.toHaveProperty('kind');
  });
});
