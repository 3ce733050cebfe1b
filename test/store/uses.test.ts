import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { UseQuota } from '../../src/store/types.js';
import { UnknownRunError, useDecision, useMethods } from '../../src/store/uses.js';
import { areaStatements, HANDED_BACK } from '../helpers/store-statements.js';
import { createRun, newJob } from './store-contract.js';

const HOUR = 3_600_000;
const NOW = 1_700_000_000_000;
const quota: UseQuota = { perUser: 3, perProject: 5, windowMs: HOUR, defaultProject: 'docs' };
const counted = (n: number, oldest: number | null = NOW - 10_000) => ({ n, oldest });

describe('whether one more use fits under the hourly limits', () => {
  it('reserves while both counts are under their limits', () => {
    expect(useDecision(quota, counted(2), counted(4), NOW)).toEqual({ reserved: true });
    expect(useDecision(quota, counted(0, null), counted(0, null), NOW)).toEqual({ reserved: true });
  });

  it('refuses at the person’s limit, free again an hour after their oldest use in the window', () => {
    expect(useDecision(quota, counted(3, NOW - 600_000), counted(3), NOW)).toEqual({
      reserved: false,
      limit: 'user',
      count: 3,
      freeAt: NOW - 600_000 + HOUR,
    });
  });

  it('refuses at the project’s limit when the person is under theirs', () => {
    expect(useDecision(quota, counted(1), counted(5, NOW - 1_000), NOW)).toEqual({
      reserved: false,
      limit: 'project',
      count: 5,
      freeAt: NOW - 1_000 + HOUR,
    });
  });

  it('tells the person of their own limit when both are reached', () => {
    expect(useDecision(quota, counted(4), counted(9), NOW)).toMatchObject({ limit: 'user', count: 4 });
  });

  it('reads counts and times a driver returns as text, and a missing oldest as now', () => {
    const asText = { n: '3' as unknown as number, oldest: String(NOW - 5) as unknown as number };
    expect(useDecision(quota, asText, counted(0), NOW)).toEqual({
      reserved: false,
      limit: 'user',
      count: 3,
      freeAt: NOW - 5 + HOUR,
    });
    expect(useDecision(quota, counted(3, null), counted(0), NOW)).toMatchObject({ freeAt: NOW + HOUR });
  });

  it('a limit of zero refuses every use', () => {
    expect(useDecision({ ...quota, perUser: 0 }, counted(0, null), counted(0, null), NOW)).toMatchObject({
      reserved: false,
      limit: 'user',
      count: 0,
    });
  });
});

describe('a use reserved for a run the store does not hold', () => {
  it('names the run', () => {
    const error = new UnknownRunError(42);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('UnknownRunError');
    expect(error.message).toBe('no run 42 in the store');
  });
});

for (const [handedBack, awaited] of HANDED_BACK) {
  describe(`uses, their statements handed back ${handedBack}`, () => {
    it('counts a person’s reserved uses and each project’s since a time, none before any', async () => {
      const store = openSqliteStore(':memory:');
      const uses = useMethods(areaStatements({ awaited, db: store.db }).engine);
      expect(await uses.recentInstructions('U0ALICE', NOW - HOUR)).toEqual({ count: 0, oldest: null });
      expect(await uses.instructionsSince(NOW - HOUR)).toEqual([]);
      const { run } = await store.insertJob(newJob('uses'), createRun(), NOW - 1_000);
      expect(await store.reserveUse(run.id, quota, NOW - 1_000)).toEqual({ reserved: true });
      expect(await uses.recentInstructions('U0ALICE', NOW - HOUR)).toEqual({ count: 1, oldest: NOW - 1_000 });
      expect(await uses.recentInstructions('U0ALICE', NOW)).toEqual({ count: 0, oldest: null });
      expect(await uses.instructionsSince(NOW - HOUR)).toEqual([{ projectId: null, count: 1 }]);
      await store.close();
    });
  });
}
